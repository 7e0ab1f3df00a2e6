/// A 48-bit Bluetooth device address (BD_ADDR).
///
/// Stored most-significant byte first, as people write it (`"C0:FF:EE:00:11:22"`); on the
/// wire HCI sends it least-significant byte first (Core 6.0, Vol 4, Part E, 5.2).
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The 48 bits of the address; the most significant byte is the first one written.
    public let rawValue: UInt64

    public static let zero = BluetoothAddress(rawValue: 0)

    /// An address from its 48-bit value (higher bits are ignored).
    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// Creates an address from six bytes, most significant first; `nil` for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.init(rawValue: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// Parses `"C0:FF:EE:00:11:22"` (also with `-` separators or none); `nil` if malformed.
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
        var parsed: [UInt8] = []
        if parts.count == 6 {
            for part in parts {
                guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
                parsed.append(byte)
            }
        } else if parts.count == 1, text.count == 12, let bytes = Hex.decode(text) {
            parsed = bytes
        } else {
            return nil
        }
        self.init(bytes: parsed)
    }

    /// Reads the address in HCI order (least significant byte first).
    public init(reading reader: inout ByteReader) throws(PacketDecodingError) {
        self.init(rawValue: try reader.readLittleEndian(byteCount: 6))
    }

    /// Writes the address in HCI order (least significant byte first).
    public func write(to writer: inout ByteWriter) {
        writer.writeLittleEndian(rawValue, byteCount: 6)
    }

    /// The six bytes, most significant first (the order of the written form).
    public var bytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> UInt64(8 * (5 - $0))) } }

    /// The bytes in HCI order (least significant first).
    public var littleEndianBytes: [UInt8] { Array(ByteWriter.littleEndianBytes(of: rawValue).prefix(6)) }

    public var description: String { Hex.encode(bytes, separator: ":").uppercased() }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let address = BluetoothAddress(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a Bluetooth address: \(text)"))
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Whether an LE device address is the public one or a random one (Core 6.0, Vol 6, Part B, 1.3).
public enum AddressType: UInt8, Hashable, Sendable, Codable, CustomStringConvertible, CaseIterable {
    case `public` = 0x00
    case random = 0x01
    /// A resolved private address whose identity is public (HCI events only).
    case publicIdentity = 0x02
    /// A resolved private address whose identity is static random (HCI events only).
    case randomIdentity = 0x03

    /// The type without the "resolved identity" distinction: public or random.
    public var base: AddressType {
        switch self {
        case .public, .publicIdentity: return .public
        case .random, .randomIdentity: return .random
        }
    }

    public var description: String {
        switch self {
        case .public: return "public"
        case .random: return "random"
        case .publicIdentity: return "public-identity"
        case .randomIdentity: return "random-identity"
        }
    }
}

/// An address together with its type: what identifies an LE device to the controller.
public struct DeviceAddress: Hashable, Sendable, Codable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var type: AddressType

    public init(_ address: BluetoothAddress, type: AddressType) {
        self.address = address
        self.type = type
    }

    /// `"C0:FF:EE:00:11:22/random"`; the public type is written without a suffix.
    public var description: String {
        type.base == .public ? "\(address)" : "\(address)/\(type.base)"
    }

    /// Parses the form written by ``description``: `"ADDR"` (public) or `"ADDR/random"`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = BluetoothAddress(String(first)) else { return nil }
        if parts.count == 2 {
            switch parts[1].lowercased() {
            case "public": type = .public
            case "random": type = .random
            default: return nil
            }
        } else {
            type = .public
        }
        self.address = address
    }
}
