import Foundation
import GATTProfiles

/// BlueCap's central side: read, write and listen with any serde value, through
/// ``Serialized``. The labels `as:` and `serializing:` keep these apart from the
/// ``Receivable``/``Transmittable`` forms (the fixed-width integers are both).
extension Bluejay {
    /// Reads a characteristic as a serde value; see `read(from:timeout:completion:)`.
    public func read<S: SerdeCodable>(from characteristic: CharacteristicIdentifier, as type: S.Type, timeout: Timeout? = nil,
                                      completion: @escaping @Sendable (ReadResult<S>) -> Void) {
        read(from: characteristic, timeout: timeout) { (result: ReadResult<Serialized<S>>) in completion(result.map(\.value)) }
    }

    /// Writes a serde value to a characteristic; see ``write(to:value:type:timeout:completion:)``.
    public func write<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, serializing value: S, type: WriteType = .withResponse,
                                       timeout: Timeout? = nil, completion: @escaping @Sendable (WriteResult) -> Void) {
        write(to: characteristic, value: Serialized(value), type: type, timeout: timeout, completion: completion)
    }

    /// Listens to a characteristic whose values are a serde type; see
    /// ``listen(to:multipleListenOption:completion:)``.
    @discardableResult
    public func listen<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, as type: S.Type,
                                        multipleListenOption: MultipleListenOption = .trap,
                                        completion: @escaping @Sendable (ReadResult<S>) -> Void) -> ListenToken {
        listen(to: characteristic, multipleListenOption: multipleListenOption) { (result: ReadResult<Serialized<S>>) in
            completion(result.map(\.value))
        }
    }

    /// Reads a characteristic as a serde value; see `read(from:timeout:)`.
    public func read<S: SerdeCodable>(from characteristic: CharacteristicIdentifier, as type: S.Type,
                                      timeout: Timeout? = nil) async throws(BluejayError) -> S {
        let serialized: Serialized<S> = try await read(from: characteristic, timeout: timeout)
        return serialized.value
    }

    /// Writes a serde value to a characteristic; see ``write(to:value:type:timeout:)``.
    public func write<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, serializing value: S, type: WriteType = .withResponse,
                                       timeout: Timeout? = nil) async throws(BluejayError) {
        try await write(to: characteristic, value: Serialized(value), type: type, timeout: timeout)
    }

    /// Listens to a characteristic whose values are a serde type; see
    /// ``listen(to:multipleListenOption:)``.
    public func listen<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, as type: S.Type,
                                        multipleListenOption: MultipleListenOption = .trap) async throws(BluejayError) -> ValueStream<S> {
        try await listenStream(to: characteristic, option: multipleListenOption, timeout: nil) { (data: Data) throws(BluejayError) -> S in
            try decode(data, as: Serialized<S>.self).value
        }
    }
}

extension RemotePeripheral {
    /// Reads a characteristic as a serde value.
    public func read<S: SerdeCodable>(from characteristic: CharacteristicIdentifier, as type: S.Type) async throws(BluejayError) -> S {
        let serialized: Serialized<S> = try await read(from: characteristic)
        return serialized.value
    }

    /// Writes a serde value to a characteristic.
    public func write<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, serializing value: S,
                                       type: WriteType = .withResponse) async throws(BluejayError) {
        try await write(to: characteristic, value: Serialized(value), type: type)
    }

    /// Listens to a characteristic whose values are a serde type.
    public func listen<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, as type: S.Type) async throws(BluejayError) -> ValueStream<S> {
        try await listenStream(to: characteristic, timeout: nil) { (data: Data) throws(BluejayError) -> S in
            try decode(data, as: Serialized<S>.self).value
        }
    }
}

extension OperationPeripheral {
    /// Reads a characteristic as a serde value.
    public func read<S: SerdeCodable>(from characteristic: CharacteristicIdentifier, as type: S.Type) async throws(BluejayError) -> S {
        let serialized: Serialized<S> = try await read(from: characteristic)
        return serialized.value
    }

    /// Writes a serde value to a characteristic.
    public func write<S: SerdeCodable>(to characteristic: CharacteristicIdentifier, serializing value: S,
                                       type: WriteType = .withResponse) async throws(BluejayError) {
        try await write(to: characteristic, value: Serialized(value), type: type)
    }
}
