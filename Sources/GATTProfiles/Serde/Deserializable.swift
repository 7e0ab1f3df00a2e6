import BluetoothCore

/// A value of a fixed number of octets, little-endian on the wire as Bluetooth sends
/// numbers (Core 6.0, Vol 3, Part G, 3.3.3.5; Vol 1, Part E, 2.2): the fixed-width integers
/// and `Float32`/`Float64` conform.
///
/// ```swift
/// let bytes = UInt16(0x1234).serialize()           // [0x34, 0x12]
/// let value = try UInt16.deserialize(bytes)         // 0x1234
/// let many = try Int16.deserializeArray([1, 0, 255, 255]) // [1, -1]
/// ```
public protocol Deserializable: SerdeCodable {
    /// The number of octets of one value.
    static var size: Int { get }
    /// Decodes one value from exactly ``size`` octets; use ``deserialize(_:)`` to have the
    /// length checked.
    init(exactBytes bytes: ArraySlice<UInt8>)
    /// The ``size`` octets of the value.
    func serialize() -> [UInt8]
    /// Parses the value's text form (decimal for numbers).
    init?(stringValue: String)
    /// The value's text form.
    var stringValue: String { get }
}

extension Deserializable {
    /// Decodes one value from exactly ``size`` octets.
    public static func deserialize(_ bytes: [UInt8]) throws(SerdeError) -> Self {
        guard bytes.count == size else { throw .wrongLength(type: "\(Self.self)", expected: size, actual: bytes.count) }
        return Self(exactBytes: bytes[...])
    }

    /// Decodes one value from the ``size`` octets at `offset`.
    public static func deserialize(_ bytes: [UInt8], at offset: Int) throws(SerdeError) -> Self {
        guard offset >= 0, offset <= bytes.count, bytes.count - offset >= size else {
            throw .tooShort(type: "\(Self.self)", offset: offset, needed: size, available: bytes.count)
        }
        return Self(exactBytes: bytes[offset..<(offset + size)])
    }

    /// Decodes consecutive values filling all of `bytes`.
    public static func deserializeArray(_ bytes: [UInt8]) throws(SerdeError) -> [Self] {
        guard size > 0, bytes.count % size == 0 else {
            throw .notAMultiple(type: "\(Self.self)", elementSize: size, actual: bytes.count)
        }
        return stride(from: 0, to: bytes.count, by: size).map { Self(exactBytes: bytes[$0..<($0 + size)]) }
    }

    /// The octets of consecutive values.
    public static func serialize(_ values: [Self]) -> [UInt8] {
        values.flatMap { $0.serialize() }
    }
}

extension Deserializable where Self: FixedWidthInteger {
    public static var size: Int { MemoryLayout<Self>.size }

    public init(exactBytes bytes: ArraySlice<UInt8>) {
        self = ByteReader.integer(littleEndian: bytes)
    }

    public func serialize() -> [UInt8] { ByteWriter.littleEndianBytes(of: self) }

    public init?(stringValue: String) {
        self.init(stringValue.trimmingSpaces, radix: 10)
    }

    public var stringValue: String { String(self) }
}

extension UInt8: Deserializable {}
extension Int8: Deserializable {}
extension UInt16: Deserializable {}
extension Int16: Deserializable {}
extension UInt32: Deserializable {}
extension Int32: Deserializable {}
extension UInt64: Deserializable {}
extension Int64: Deserializable {}

/// IEEE 754 binary32, little-endian.
extension Float32: Deserializable {
    public static var size: Int { 4 }

    public init(exactBytes bytes: ArraySlice<UInt8>) {
        self.init(bitPattern: UInt32(exactBytes: bytes))
    }

    public func serialize() -> [UInt8] { bitPattern.serialize() }

    public init?(stringValue: String) {
        guard let value = Float32(stringValue.trimmingSpaces) else { return nil }
        self = value
    }

    public var stringValue: String { "\(self)" }
}

/// IEEE 754 binary64, little-endian.
extension Float64: Deserializable {
    public static var size: Int { 8 }

    public init(exactBytes bytes: ArraySlice<UInt8>) {
        self.init(bitPattern: UInt64(exactBytes: bytes))
    }

    public func serialize() -> [UInt8] { bitPattern.serialize() }

    public init?(stringValue: String) {
        guard let value = Float64(stringValue.trimmingSpaces) else { return nil }
        self = value
    }

    public var stringValue: String { "\(self)" }
}

extension String {
    var trimmingSpaces: Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }),
              let last = scalars.lastIndex(where: { $0 != " " }) else { return "" }
        return self[first...last]
    }
}
