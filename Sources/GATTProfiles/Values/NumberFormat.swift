import BluetoothCore

/// A characteristic value read as one number of a fixed format, little-endian as GATT
/// values are: what `bluejay read --format` and `listen --format` print. Each format takes an
/// exact number of octets; any other length is a ``SerdeError``, never a trap.
public enum NumberFormat: String, CaseIterable, Sendable {
    case u8, u16, u32, u64
    case i8, i16, i32
    /// IEEE 754 binary32.
    case f32
    /// IEEE 11073-20601 16-bit SFLOAT (``SFloat``), with its special values.
    case sfloat

    /// The octets the format takes.
    public var width: Int {
        switch self {
        case .u8, .i8: return 1
        case .u16, .i16, .sfloat: return 2
        case .u32, .i32, .f32: return 4
        case .u64: return 8
        }
    }

    /// One line of `--help`.
    public var summary: String {
        switch self {
        case .u8: return "unsigned 8-bit integer"
        case .u16: return "unsigned 16-bit integer"
        case .u32: return "unsigned 32-bit integer"
        case .u64: return "unsigned 64-bit integer"
        case .i8: return "signed 8-bit integer"
        case .i16: return "signed 16-bit integer"
        case .i32: return "signed 32-bit integer"
        case .f32: return "IEEE 754 32-bit float"
        case .sfloat: return "IEEE 11073 16-bit SFLOAT (health profiles): NaN, NRes, +INF, -INF, reserved"
        }
    }

    /// The value as text: decimal integers, the float's shortest exact form, the SFLOAT's
    /// decimal form or special value.
    /// - Throws: ``SerdeError/wrongLength(type:expected:actual:)`` unless `bytes` has
    ///   exactly ``width`` octets.
    public func format(_ bytes: some Collection<UInt8>) throws(SerdeError) -> String {
        guard bytes.count == width else { throw .wrongLength(type: rawValue, expected: width, actual: bytes.count) }
        let bits: UInt64 = ByteReader.integer(littleEndian: bytes)
        switch self {
        case .u8, .u16, .u32, .u64: return String(bits)
        case .i8: return String(Int8(truncatingIfNeeded: bits))
        case .i16: return String(Int16(truncatingIfNeeded: bits))
        case .i32: return String(Int32(truncatingIfNeeded: bits))
        case .f32: return String(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        case .sfloat: return SFloat(bits: UInt16(truncatingIfNeeded: bits)).description
        }
    }
}
