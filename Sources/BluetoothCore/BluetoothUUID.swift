/// A Bluetooth UUID: 16-bit and 32-bit SIG-assigned aliases of the Bluetooth Base UUID,
/// or a full 128-bit UUID (Core 6.0, Vol 3, Part B, 2.5.1).
///
/// Two UUIDs that denote the same 128-bit value compare equal whatever their width, so
/// `BluetoothUUID("180D") == BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB")`.
public struct BluetoothUUID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The 128-bit value, most significant byte first (the order of the written form).
    public let bigEndianBytes: [UInt8]

    /// 0000xxxx-0000-1000-8000-00805F9B34FB
    private static let baseSuffix: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    private init(storage: [UInt8]) { bigEndianBytes = storage }

    public init(_ value: UInt16) { self.init(UInt32(value)) }

    public init(_ value: UInt32) {
        self.init(storage: [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] + Self.baseSuffix)
    }

    /// From 16 bytes, most significant first; `nil` for any other count.
    public init?(bigEndianBytes bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.init(storage: bytes)
    }

    /// From the little-endian wire form used by ATT and advertising data: 2, 4 or 16 bytes.
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        var reader = ByteReader(bytes, context: "UUID")
        switch reader.remainingCount {
        case 2, 4:
            guard let alias = try? reader.readLittleEndian(byteCount: reader.remainingCount) else { return nil }
            self.init(UInt32(truncatingIfNeeded: alias))
        case 16:
            self.init(storage: reader.remaining.reversed())
        default:
            return nil
        }
    }

    /// Parses `"180D"`, `"0x180D"`, `"0000180D"` or the 36-character form
    /// `"6E400001-B5A3-F393-E0A9-E50E24DCCA9E"`; `nil` if malformed.
    public init?(_ text: String) {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        switch digits.count {
        case 4:
            guard let value = UInt16(digits, radix: 16) else { return nil }
            self.init(value)
        case 8:
            guard let value = UInt32(digits, radix: 16) else { return nil }
            self.init(value)
        case 36:
            let groups = digits.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12], let bytes = Hex.decode(groups.joined()) else { return nil }
            self.init(storage: bytes)
        case 32:
            guard let bytes = Hex.decode(String(digits)) else { return nil }
            self.init(storage: bytes)
        default:
            return nil
        }
    }

    /// The 16-bit alias if this UUID is one.
    public var uint16: UInt16? {
        guard bigEndianBytes[0] == 0, bigEndianBytes[1] == 0, Array(bigEndianBytes[4...]) == Self.baseSuffix else { return nil }
        return UInt16(bigEndianBytes[2]) << 8 | UInt16(bigEndianBytes[3])
    }

    /// The 32-bit alias if this UUID is one (16-bit aliases are also 32-bit aliases).
    public var uint32: UInt32? {
        guard Array(bigEndianBytes[4...]) == Self.baseSuffix else { return nil }
        return bigEndianBytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The shortest little-endian wire form: 2 bytes for 16-bit aliases, else 16 bytes.
    /// ATT only carries 16- and 128-bit UUIDs (Core 6.0, Vol 3, Part F, 3.2.1).
    public var attBytes: [UInt8] {
        if let short = uint16 {
            var writer = ByteWriter(capacity: 2)
            writer.write(short)
            return writer.bytes
        }
        return bigEndianBytes.reversed()
    }

    /// The 16-byte little-endian wire form.
    public var littleEndianBytes128: [UInt8] { bigEndianBytes.reversed() }

    /// `"180D"` for 16-bit aliases, `"0000FEED"`-style 8 digits for 32-bit ones, else the full form.
    public var description: String {
        if let short = uint16 { return Self.padded(UInt64(short), digits: 4) }
        if let medium = uint32 { return Self.padded(UInt64(medium), digits: 8) }
        return uuidString
    }

    /// The full 36-character upper-case form.
    public var uuidString: String {
        let hex = Hex.encode(bigEndianBytes).uppercased()
        var result = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { result.append("-") }
            result.append(character)
        }
        return result
    }

    private static func padded(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16).uppercased()
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.bigEndianBytes.lexicographicallyPrecedes(rhs.bigEndianBytes) }

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
