import BluetoothCore
import BluetoothHost

extension PeripheralManager {
    /// The writes centrals make to a characteristic, to answer one by one with
    /// ``WriteRequest/respond(_:)``. Until this is called every permitted write is accepted
    /// and stored. Asking again ends the previous stream; so does removing the service.
    public func writeRequests(for characteristic: GATTPublishedCharacteristic) -> AsyncStream<WriteRequest> {
        let (stream, continuation) = AsyncStream.makeStream(of: WriteRequest.self, bufferingPolicy: .unbounded)
        router.setWriteConsumer(.stream(continuation), valueHandle: characteristic.valueHandle)
        return stream
    }

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
