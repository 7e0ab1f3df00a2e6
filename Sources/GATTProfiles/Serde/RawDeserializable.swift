import BluetoothCore

/// A characteristic value that is one ``Deserializable`` value with a meaning: an enum with
/// a raw value, or a struct that checks its range.
///
/// ```swift
/// enum Enabled: UInt8, RawDeserializable {
///     case no = 0, yes = 1
///     static let uuid: BluetoothUUID = "F000AA12-0451-4000-B000-000000000000"
/// }
/// let bytes = Enabled.yes.serialize()               // [0x01]
/// let value = try Enabled.deserialize([0x01])       // .yes
/// try Enabled.deserialize([0x07])                   // throws SerdeError.invalidRawValue
/// ```
public protocol RawDeserializable: RawRepresentable, SerdeCodable where RawValue: Deserializable {
    /// The characteristic this value belongs to.
    static var uuid: BluetoothUUID { get }
}

extension RawDeserializable {
    /// The type of the one value, as BlueCap names it.
    public typealias RawType = RawValue
}

extension RawDeserializable {
    /// Decodes exactly `RawType.size` octets and checks the raw value.
    public static func deserialize(_ bytes: [UInt8]) throws(SerdeError) -> Self {
        let raw = try RawType.deserialize(bytes)
        guard let value = Self(rawValue: raw) else { throw .invalidRawValue(type: "\(Self.self)", value: raw.stringValue) }
        return value
    }

    public func serialize() -> [UInt8] { rawValue.serialize() }
}

/// A characteristic value that is a fixed number of values of one type.
///
/// ```swift
/// struct Acceleration: RawArrayDeserializable {
///     static let uuid: BluetoothUUID = "F000AA11-0451-4000-B000-000000000000"
///     static let size = 3
///     let rawValue: [Int8]
///     init?(rawValue: [Int8]) { guard rawValue.count == 3 else { return nil }; self.rawValue = rawValue }
/// }
/// ```
public protocol RawArrayDeserializable: SerdeCodable {
    associatedtype RawType: Deserializable
    static var uuid: BluetoothUUID { get }
    /// How many values the array holds.
    static var size: Int { get }
    var rawValue: [RawType] { get }
    init?(rawValue: [RawType])
}

extension RawArrayDeserializable {
    /// The number of octets of the whole value.
    public static var byteCount: Int { size * RawType.size }

    /// Decodes exactly ``size`` values and checks them.
    public static func deserialize(_ bytes: [UInt8]) throws(SerdeError) -> Self {
        guard bytes.count == byteCount else { throw .wrongLength(type: "\(Self.self)", expected: byteCount, actual: bytes.count) }
        let raw = try RawType.deserializeArray(bytes)
        guard let value = Self(rawValue: raw) else {
            throw .invalidRawValue(type: "\(Self.self)", value: "[" + raw.map(\.stringValue).joined(separator: ", ") + "]")
        }
        return value
    }

    public func serialize() -> [UInt8] { RawType.serialize(rawValue) }
}

/// A characteristic value made of two values of different types, one after the other.
public protocol RawPairDeserializable: SerdeCodable {
    associatedtype RawType1: Deserializable
    associatedtype RawType2: Deserializable
    static var uuid: BluetoothUUID { get }
    var rawValue1: RawType1 { get }
    var rawValue2: RawType2 { get }
    init?(rawValue1: RawType1, rawValue2: RawType2)
}

extension RawPairDeserializable {
    public static var byteCount: Int { RawType1.size + RawType2.size }

    /// Decodes exactly the two values and checks them.
    public static func deserialize(_ bytes: [UInt8]) throws(SerdeError) -> Self {
        guard bytes.count == byteCount else { throw .wrongLength(type: "\(Self.self)", expected: byteCount, actual: bytes.count) }
        let first = try RawType1.deserialize(bytes, at: 0)
        let second = try RawType2.deserialize(bytes, at: RawType1.size)
        guard let value = Self(rawValue1: first, rawValue2: second) else {
            throw .invalidRawValue(type: "\(Self.self)", value: "(\(first.stringValue), \(second.stringValue))")
        }
        return value
    }

    public func serialize() -> [UInt8] { rawValue1.serialize() + rawValue2.serialize() }
}

/// A characteristic value made of a fixed number of values of one type followed by a fixed
/// number of values of another.
public protocol RawArrayPairDeserializable: SerdeCodable {
    associatedtype RawType1: Deserializable
    associatedtype RawType2: Deserializable
    static var uuid: BluetoothUUID { get }
    /// How many values of the first type.
    static var size1: Int { get }
    /// How many values of the second type.
    static var size2: Int { get }
    var rawValue1: [RawType1] { get }
    var rawValue2: [RawType2] { get }
    init?(rawValue1: [RawType1], rawValue2: [RawType2])
}

extension RawArrayPairDeserializable {
    public static var byteCount: Int { size1 * RawType1.size + size2 * RawType2.size }

    /// Decodes exactly ``size1`` and ``size2`` values and checks them.
    public static func deserialize(_ bytes: [UInt8]) throws(SerdeError) -> Self {
        guard bytes.count == byteCount else { throw .wrongLength(type: "\(Self.self)", expected: byteCount, actual: bytes.count) }
        let split = size1 * RawType1.size
        let first = try RawType1.deserializeArray(Array(bytes[..<split]))
        let second = try RawType2.deserializeArray(Array(bytes[split...]))
        guard let value = Self(rawValue1: first, rawValue2: second) else {
            let text = "([" + first.map(\.stringValue).joined(separator: ", ") + "], [" + second.map(\.stringValue).joined(separator: ", ") + "])"
            throw .invalidRawValue(type: "\(Self.self)", value: text)
        }
        return value
    }

    public func serialize() -> [UInt8] { RawType1.serialize(rawValue1) + RawType2.serialize(rawValue2) }
}

/// A characteristic value with a layout of its own (flags that say which fields follow, for
/// example): it decodes and encodes itself.
public protocol BytesDeserializable: SerdeCodable {
    static var uuid: BluetoothUUID { get }
    /// Decodes the value, checking every length.
    init(bytes: [UInt8]) throws(SerdeError)
    func serialize() -> [UInt8]
}

extension BytesDeserializable {
    public static func deserialize(_ bytes: [UInt8]) throws(SerdeError) -> Self { try Self(bytes: bytes) }
}
