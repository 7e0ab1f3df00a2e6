/// A Bluetooth UUID: 16-bit and 32-bit SIG-assigned aliases of the Bluetooth Base UUID,
/// or a full 128-bit UUID (Core 6.0, Vol 3, Part B, 2.5.1).
///
/// Two UUIDs that denote the same 128-bit value compare equal whatever their width, so
/// `BluetoothUUID("180D") == BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB")`.
public struct BluetoothUUID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    // The 128-bit value in two halves, most significant first: no heap storage, so a UUID
    // costs nothing to copy, hash or compare (a discovered database holds one per attribute).
    private let high: UInt64
    private let low: UInt64

    /// The upper half of the Bluetooth Base UUID 0000xxxx-0000-1000-8000-00805F9B34FB without
    /// its alias bits, and its lower half.
    private static let baseHigh: UInt64 = 0x0000_1000
    private static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    private init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init(_ value: UInt16) { self.init(UInt32(value)) }

    public init(_ value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.baseHigh, low: Self.baseLow)
    }

    /// From 16 bytes, most significant first; `nil` for any other count.
    public init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let high = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes.dropFirst(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(high: high, low: low)
    }

    /// From the little-endian wire form used by ATT and advertising data: 2, 4 or 16 bytes.
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 2, 4:
            let alias: UInt32 = ByteReader.integer(littleEndian: bytes)
            self.init(alias)
        case 16:
            self.init(bigEndianBytes: bytes.reversed())
        default:
            return nil
        }
    }

    /// Parses `"180D"`, `"0x180D"`, `"0000180D"`, 32 hexadecimal digits, or the 36-character
    /// form `"6E400001-B5A3-F393-E0A9-E50E24DCCA9E"`; `nil` if malformed (every character
    /// must be a hexadecimal digit, or a dash where the written form has one).
    public init?(_ text: String) {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        switch digits.utf8.count {
        case 4:
            guard let value = Self.hexValue(digits.utf8) else { return nil }
            self.init(UInt16(value))
        case 8:
            guard let value = Self.hexValue(digits.utf8) else { return nil }
            self.init(UInt32(value))
        case 32:
            guard let high = Self.hexValue(digits.utf8.prefix(16)), let low = Self.hexValue(digits.utf8.dropFirst(16)) else { return nil }
            self.init(high: high, low: low)
        case 36:
            let utf8 = Array(digits.utf8)
            // Dashes at 8, 13, 18 and 23, hexadecimal digits everywhere else.
            guard [8, 13, 18, 23].allSatisfy({ utf8[$0] == UInt8(ascii: "-") }) else { return nil }
            let hex = utf8.enumerated().filter { ![8, 13, 18, 23].contains($0.offset) }.map(\.element)
            guard let high = Self.hexValue(hex.prefix(16)), let low = Self.hexValue(hex.dropFirst(16)) else { return nil }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// The value of up to 16 hexadecimal digits; `nil` if any character is not one.
    private static func hexValue(_ digits: some Collection<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for character in digits {
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// The 128-bit value, most significant byte first (the order of the written form).
    public var bigEndianBytes: [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: high >> ($0 * 8)) }
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: low >> ($0 * 8)) }
    }

    /// The 16-bit alias if this UUID is one.
    public var uint16: UInt16? {
        guard let alias = uint32, alias <= UInt32(UInt16.max) else { return nil }
        return UInt16(alias)
    }

    /// The 32-bit alias if this UUID is one (16-bit aliases are also 32-bit aliases).
    public var uint32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(high >> 32)
    }

    /// The shortest little-endian wire form: 2 bytes for 16-bit aliases, else 16 bytes.
    /// ATT only carries 16- and 128-bit UUIDs (Core 6.0, Vol 3, Part F, 3.2.1).
    public var attBytes: [UInt8] {
        if let short = uint16 { return [UInt8(truncatingIfNeeded: short), UInt8(short >> 8)] }
        return littleEndianBytes128
    }

    /// The 16-byte little-endian wire form.
    public var littleEndianBytes128: [UInt8] {
        ByteWriter.littleEndianBytes(of: low) + ByteWriter.littleEndianBytes(of: high)
    }

    /// `"180D"` for 16-bit aliases, `"0000FEED"`-style 8 digits for 32-bit ones, else the full form.
    public var description: String {
        if let short = uint16 { return Hex.digits(short, count: 4) }
        if let medium = uint32 { return Hex.digits(medium, count: 8) }
        return uuidString
    }

    /// The full 36-character upper-case form.
    public var uuidString: String {
        let hex = Hex.digits(high, count: 16) + Hex.digits(low, count: 16)
        var result = ""
        result.reserveCapacity(36)
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { result.append("-") }
            result.append(character)
        }
        return result
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let uuid = BluetoothUUID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a Bluetooth UUID: \(text)"))
        }
        self = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension BluetoothUUID: ExpressibleByStringLiteral {
    /// For literals in code only: a malformed literal is a programming error.
    public init(stringLiteral value: String) {
        guard let uuid = BluetoothUUID(value) else { preconditionFailure("malformed UUID literal \(value)") }
        self = uuid
    }
}
