import BluetoothHost
import Foundation

/// The peripheral a ``PeripheralOperation`` acts on, while it holds the queue: its requests
/// run at once, within the operation's time limit, and end when the operation is aborted.
public struct OperationPeripheral: Sendable, CustomStringConvertible {
    let link: PeripheralLink

    /// The peripheral.
    public var identifier: PeripheralIdentifier { link.identifier }
    /// The underlying connection, for what this type does not offer: our host's `Connection`,
    /// or BlueZ's link.
    public var connection: any CentralConnection { link.connection }
    /// The ATT MTU negotiated with the peripheral.
    public var attMTU: Int { link.mtu }
    /// The longest value one write of `type` carries.
    public func maximumWriteValueLength(for type: WriteType) -> Int { link.maximumWriteValueLength(for: type) }

    public var description: String { "\(identifier)" }

    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier) async throws(BluejayError) -> R {
        let data = try await mapped("read \(characteristic)") { try await link.read(characteristic) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    public func write<S: Transmittable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await mapped("write \(data.count) bytes to \(characteristic)") { try await link.write(data, to: characteristic, type: type) }
    }

    public func read<R: Receivable>(from descriptor: DescriptorIdentifier) async throws(BluejayError) -> R {
        let data = try await mapped("read \(descriptor)") { try await link.read(descriptor) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    public func write<S: Transmittable>(to descriptor: DescriptorIdentifier, value: S) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await mapped("write \(data.count) bytes to \(descriptor)") { try await link.write(data, to: descriptor) }
    }

    /// Turns notifications (or indications) on and returns the values; stopping the iteration
    /// turns them off unless a listen of the app still wants them. The stream throws when the
    /// link drops or a value cannot be made into `R`. It may outlive the operation.
    public func listen<R: Receivable & Sendable>(to characteristic: CharacteristicIdentifier) async throws(BluejayError) -> ValueStream<R> {
        let (stream, continuation) = ValueStream.makeStream(of: R.self, limit: Bluejay.listenBufferLimit)
        let peripheral = identifier
        let subscription = try await mapped("listen to \(characteristic)") {
            try await link.subscribe(characteristic, ended: { error in
                continuation.finish(throwing: error.map { BluejayError($0, peripheral: peripheral, operation: "listening to \(characteristic)") })
            }, handler: { values in
                continuation.yield(decoding: values.map { Data($0.value) })
            })
        }
        continuation.onTermination = { subscription.cancel() }
        return stream
    }

    /// The signal strength of the link, in dBm.
    public func rssi() async throws(BluejayError) -> Int {
        try await mapped("read RSSI") { try await link.readRSSI() }
    }

    private func mapped<T: Sendable>(_ name: String, _ work: () async throws -> T) async throws(BluejayError) -> T {
        do {
            return try await work()
        } catch {
            throw BluejayError(error, peripheral: identifier, operation: name)
        }
    }
}
