/// Any value of the serde family: ``Deserializable``, ``RawDeserializable``,
/// ``RawArrayDeserializable``, ``RawPairDeserializable``, ``RawArrayPairDeserializable`` and
/// ``BytesDeserializable`` all refine it, and each gives it its own decoding and encoding. Code
/// that takes any serde value (a central reading, writing or listening, as Bluejay's
/// `read(from:as:)` does) takes a `SerdeCodable`.
///
/// ```swift
/// func decode<T: SerdeCodable>(_ bytes: [UInt8], as: T.Type) throws(SerdeError) -> T {
///     try T.decode(serdeBytes: bytes)
/// }
/// let level = try decode([0x55], as: BatteryProfile.Level.self)
/// ```
public protocol SerdeCodable: Sendable {
    /// Decodes a whole value, checking every length and raw value.
    static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self
    /// The value's octets.
    func serdeBytes() -> [UInt8]
}

extension Deserializable {
    public static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self { try deserialize(bytes) }
    public func serdeBytes() -> [UInt8] { serialize() }
}

extension RawDeserializable {
    public static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self { try deserialize(bytes) }
    public func serdeBytes() -> [UInt8] { serialize() }
}

extension RawArrayDeserializable {
    public static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self { try deserialize(bytes) }
    public func serdeBytes() -> [UInt8] { serialize() }
}

extension RawPairDeserializable {
    public static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self { try deserialize(bytes) }
    public func serdeBytes() -> [UInt8] { serialize() }
}

extension RawArrayPairDeserializable {
    public static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self { try deserialize(bytes) }
    public func serdeBytes() -> [UInt8] { serialize() }
}

extension BytesDeserializable {
    public static func decode(serdeBytes bytes: [UInt8]) throws(SerdeError) -> Self { try Self(bytes: bytes) }
    public func serdeBytes() -> [UInt8] { serialize() }
}
