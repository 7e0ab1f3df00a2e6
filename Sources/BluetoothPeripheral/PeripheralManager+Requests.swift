import BluetoothCore
import BluetoothHost

extension PeripheralManager {
    /// The writes centrals make to a characteristic, to answer one by one with
    /// ``WriteRequest/respond(_:)``. Until this is called every permitted write is accepted
    /// and stored. Asking again ends the previous stream; so does removing the service.
    ///
    /// The stream holds at most `bufferLimit` requests the consumer has not taken. A write
    /// past that is refused at once with Insufficient Resources (Core 6.0, Vol 3, Part F,
    /// 3.4.1.1), and counted in ``droppedWriteRequests``: the central learns its write was
    /// not done, and a consumer that stops reading costs bounded memory. (A central's Write
    /// Requests wait for their answers one at a time, so the stream rarely holds more than
    /// one per central; the rest are requests the server gave up on at its handler timeout.)
    public func writeRequests(for characteristic: GATTPublishedCharacteristic,
                              bufferLimit: Int = PeripheralManager.writeRequestBufferLimit) -> AsyncStream<WriteRequest> {
        let (stream, continuation) = AsyncStream.makeStream(of: WriteRequest.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        router.setWriteConsumer(.stream(continuation), valueHandle: characteristic.valueHandle)
        return stream
    }

    /// The default `bufferLimit` of ``writeRequests(for:bufferLimit:)``: 128 requests.
    public static let writeRequestBufferLimit = 128

    /// How many writes were refused because a ``writeRequests(for:bufferLimit:)`` stream was full.
    public nonisolated var droppedWriteRequests: Int { router.droppedWriteRequests }

    /// Goes back to accepting every permitted write of the characteristic.
    public func stopRespondingToWriteRequests(for characteristic: GATTPublishedCharacteristic) {
        router.setWriteConsumer(nil, valueHandle: characteristic.valueHandle)
    }

    /// Answers reads of a characteristic with `handler` instead of the stored value;
    /// `nil` goes back to the stored value.
    public func setReadHandler(for characteristic: GATTPublishedCharacteristic, _ handler: ReadHandler?) {
        router.setReadHandler(handler, valueHandle: characteristic.valueHandle)
    }
}
