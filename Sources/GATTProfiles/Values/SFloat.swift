import BluetoothCore

/// The IEEE 11073-20601 16-bit SFLOAT of the health profiles (Health Thermometer, Blood
/// Pressure, Glucose, …): a 4-bit signed exponent (base 10) over a 12-bit signed mantissa,
/// little-endian on the air. Five mantissas are reserved for special values (IEEE
/// 11073-20601, F.8; the GATT Specification Supplement's "medfloat16").
public enum SFloat: Hashable, Sendable, CustomStringConvertible {
    /// `mantissa` × 10^`exponent`; the mantissa is -2046…2045, the exponent -8…7.
    case number(mantissa: Int16, exponent: Int8)
    /// Not a Number (mantissa 0x7FF).
    case nan
    /// Not at this Resolution: the value cannot be represented (mantissa 0x800).
    case nres
    /// +INFINITY (mantissa 0x7FE).
    case positiveInfinity
    /// -INFINITY (mantissa 0x802).
    case negativeInfinity
    /// Reserved for future use (mantissa 0x801).
    case reserved

    /// Decodes the 16 bits (already assembled from their little-endian octets).
    public init(bits: UInt16) {
        let rawMantissa = bits & 0x0FFF
        switch rawMantissa {
        case 0x07FF: self = .nan
        case 0x0800: self = .nres
        case 0x07FE: self = .positiveInfinity
        case 0x0802: self = .negativeInfinity
        case 0x0801: self = .reserved
        default:
            // Sign-extend the 12-bit mantissa and the 4-bit exponent.
            let mantissa = Int16(bitPattern: rawMantissa << 4) >> 4
            let exponent = Int8(bitPattern: UInt8(truncatingIfNeeded: bits >> 12) << 4) >> 4
            self = .number(mantissa: mantissa, exponent: exponent)
        }
    }

    /// Decodes a characteristic value: exactly two octets, little-endian.
    /// - Throws: ``SerdeError/wrongLength(type:expected:actual:)`` for any other length.
    public init(bytes: some Collection<UInt8>) throws(SerdeError) {
        guard bytes.count == 2 else { throw .wrongLength(type: "SFLOAT", expected: 2, actual: bytes.count) }
        self.init(bits: ByteReader.integer(littleEndian: bytes))
    }

    /// The value as a `Double`: NaN for ``nan``, ``nres`` and ``reserved``; ±infinity.
    public var doubleValue: Double {
        switch self {
        case let .number(mantissa, exponent):
            var value = Double(mantissa)
            // Exact decimal scaling: dividing by a power of ten rounds once.
            let scale = (0..<Int(exponent.magnitude)).reduce(1.0) { result, _ in result * 10 }
            value = exponent < 0 ? value / scale : value * scale
            return value
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        case .nan, .nres, .reserved: return .nan
        }
    }

    /// The number in decimal without floating-point noise (`36.6`, `-0.05`, `1200`), or
    /// `NaN`, `NRes`, `+INF`, `-INF`, `reserved`.
    public var description: String {
        switch self {
        case let .number(mantissa, exponent):
            return Self.decimal(mantissa: Int(mantissa), exponent: Int(exponent))
        case .nan: return "NaN"
        case .nres: return "NRes"
        case .positiveInfinity: return "+INF"
        case .negativeInfinity: return "-INF"
        case .reserved: return "reserved"
        }
    }

    private static func decimal(mantissa: Int, exponent: Int) -> String {
        let sign = mantissa < 0 ? "-" : ""
        let digits = String(mantissa.magnitude)
        if exponent >= 0 {
            return mantissa == 0 ? "0" : sign + digits + String(repeating: "0", count: exponent)
        }
        let fractionDigits = -exponent
        let padded = String(repeating: "0", count: max(0, fractionDigits + 1 - digits.count)) + digits
        let integerPart = padded.dropLast(fractionDigits)
        let fraction = padded.suffix(fractionDigits)
        return (mantissa == 0 ? "" : sign) + integerPart + "." + fraction
    }
}
