import BluetoothHost
import Foundation

extension Bluejay {
    /// Reads a characteristic (long values included) and makes `R` from its bytes.
    /// `timeout` replaces the operation time limit for this call (``Timeout/none``: none).
    ///
    /// ```swift
    /// bluejay.read(from: bodySensorLocation) { (result: ReadResult<UInt8>) in ... }
    /// ```
    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier, timeout: Timeout? = nil,
                                    completion: @escaping @Sendable (ReadResult<R>) -> Void) {
        let deliver = onCallbackQueue { (result: Result<Data, BluejayError>) in completion(result.decoded()) }
        submitGATT("read \(characteristic)", timeout: timeout,
                   begin: { link, scope, next in link.startRead(characteristic, within: scope, completion: next) },
                   work: { link in try await link.read(characteristic) }, deliver: deliver)
    }

    /// Writes a value: with response (acknowledged; long values as a long write) or without
    /// (paced by the controller's buffer credits; at most MTU - 3 bytes). `timeout` replaces the
    /// operation time limit for this call.
    public func write<S: Transmittable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
                                        timeout: Timeout? = nil, completion: @escaping @Sendable (WriteResult) -> Void) {
        let data = value.toBluetoothData()
        submitGATT("write \(data.count) bytes to \(characteristic)\(type == .withoutResponse ? " without response" : type == .signed ? " signed" : "")",
                   timeout: timeout,
                   begin: { link, scope, next in link.startWrite(data, to: characteristic, type: type, within: scope, completion: next) },
                   work: { link in try await link.write(data, to: characteristic, type: type) },
                   deliver: onCallbackQueue(completion))
    }

    /// Reads a descriptor and makes `R` from its bytes. `timeout` replaces the operation time
    /// limit for this call.
    public func read<R: Receivable>(from descriptor: DescriptorIdentifier, timeout: Timeout? = nil,
                                    completion: @escaping @Sendable (ReadResult<R>) -> Void) {
        let deliver = onCallbackQueue { (result: Result<Data, BluejayError>) in completion(result.decoded()) }
        submitGATT("read \(descriptor)", timeout: timeout,
                   begin: { link, scope, next in link.startRead(descriptor, within: scope, completion: next) },
                   work: { link in try await link.read(descriptor) }, deliver: deliver)
    }

    /// Writes a descriptor (with response). `timeout` replaces the operation time limit for this call.
    public func write<S: Transmittable>(to descriptor: DescriptorIdentifier, value: S, timeout: Timeout? = nil,
                                        completion: @escaping @Sendable (WriteResult) -> Void) {
        let data = value.toBluetoothData()
        submitGATT("write \(data.count) bytes to \(descriptor)", timeout: timeout,
                   begin: { link, scope, next in link.startWrite(data, to: descriptor, within: scope, completion: next) },
                   work: { link in try await link.write(data, to: descriptor) }, deliver: onCallbackQueue(completion))
    }

    /// Reads the signal strength of the connection; the ``RSSIObserver``s get the result.
    /// - Throws: ``BluejayError/notConnected`` (or why the request cannot be made) at once.
    public func readRSSI() throws(BluejayError) {
        if let refusal = refusal(for: "readRSSI") { throw refusal }
        guard let peripheral = connectedPeripheral else { throw .notConnected }
        submitGATT("read RSSI", work: { link in try await link.readRSSI() }, deliver: { [self] result in
            let observers = self.state.withLock { $0.rssiObservers.live() }
            self.onCallbackQueue {
                for observer in observers {
                    switch result {
                    case let .success(rssi): observer.didReadRSSI(from: peripheral, RSSI: rssi, error: nil)
                    case let .failure(error): observer.didReadRSSI(from: peripheral, RSSI: 127, error: error)
                    }
                }
            }
        })
    }
}

extension Result where Success == Data, Failure == BluejayError {
    /// Makes `R` from the bytes (see ``decode(_:as:)``).
    func decoded<R: Receivable>() -> Result<R, BluejayError> {
        flatMap { data in Result<R, BluejayError> { () throws(BluejayError) in try decode(data, as: R.self) } }
    }
}

/// Makes `R` from the bytes; whatever the initializer throws becomes
/// ``BluejayError/deserializationFailed(type:data:reason:)`` with the bytes received.
func decode<R: Receivable>(_ data: Data, as _: R.Type) throws(BluejayError) -> R {
    do {
        return try R(bluetoothData: data)
    } catch let BluejayError.deserializationFailed(type, bytes, reason) where bytes == data {
        throw .deserializationFailed(type: type, data: bytes, reason: reason)
    } catch {
        throw .deserializationFailed(type: String(describing: R.self), data: data, reason: "\(error)")
    }
}
