/// Serialization and deserialization in one place, for every kind of value this module
/// knows: ``Deserializable`` numbers, the raw families, structured values and strings.
///
/// ```swift
/// let bytes = Serde.serialize(UInt16(31))                     // [31, 0]
/// let value: UInt16 = try Serde.deserialize(bytes)
/// let name = try Serde.deserialize([0x42, 0x4A], encoding: .utf8)  // "BJ"
/// ```
public enum Serde {
    public static func serialize<T: Deserializable>(_ value: T) -> [UInt8] { value.serialize() }
    public static func deserialize<T: Deserializable>(_ bytes: [UInt8], as type: T.Type = T.self) throws(SerdeError) -> T {
        try T.deserialize(bytes)
    }

    public static func serialize<T: RawDeserializable>(_ value: T) -> [UInt8] { value.serialize() }
    public static func deserialize<T: RawDeserializable>(_ bytes: [UInt8], as type: T.Type = T.self) throws(SerdeError) -> T {
        try T.deserialize(bytes)
    }

    public static func serialize<T: RawArrayDeserializable>(_ value: T) -> [UInt8] { value.serialize() }
    public static func deserialize<T: RawArrayDeserializable>(_ bytes: [UInt8], as type: T.Type = T.self) throws(SerdeError) -> T {
        try T.deserialize(bytes)
    }

    public static func serialize<T: RawPairDeserializable>(_ value: T) -> [UInt8] { value.serialize() }
    public static func deserialize<T: RawPairDeserializable>(_ bytes: [UInt8], as type: T.Type = T.self) throws(SerdeError) -> T {
        try T.deserialize(bytes)
    }

    public static func serialize<T: RawArrayPairDeserializable>(_ value: T) -> [UInt8] { value.serialize() }
    public static func deserialize<T: RawArrayPairDeserializable>(_ bytes: [UInt8], as type: T.Type = T.self) throws(SerdeError) -> T {
        try T.deserialize(bytes)
    }

    public static func serialize<T: BytesDeserializable>(_ value: T) -> [UInt8] { value.serialize() }
    public static func deserialize<T: BytesDeserializable>(_ bytes: [UInt8], as type: T.Type = T.self) throws(SerdeError) -> T {
        try T(bytes: bytes)
    }

    /// Text in an encoding (UTF-8 unless told).
    public static func serialize(_ text: String, encoding: StringEncoding = .utf8) throws(SerdeError) -> [UInt8] {
        try encoding.encode(text)
    }

    public static func deserialize(_ bytes: [UInt8], encoding: StringEncoding = .utf8) throws(SerdeError) -> String {
        try encoding.decode(bytes)
    }
}
