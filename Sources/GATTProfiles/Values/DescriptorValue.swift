import BluetoothCore

/// A descriptor's value, decoded for people: the User Description's text, the
/// Presentation Format's fields, the Client Characteristic Configuration's bits; other
/// descriptors as their octets.
public enum DescriptorValue: Hashable, Sendable, CustomStringConvertible {
    /// Characteristic User Description (0x2901): UTF-8 text (Core 6.0, Vol 3, Part G, 3.3.3.2).
    case userDescription(String)
    /// Characteristic Presentation Format (0x2904, Core 6.0, Vol 3, Part G, 3.3.3.5).
    case presentationFormat(PresentationFormat)
    /// Client Characteristic Configuration (0x2902, Core 6.0, Vol 3, Part G, 3.3.3.3).
    case clientConfiguration(notifications: Bool, indications: Bool)
    /// Any other descriptor.
    case other([UInt8])

    public static let userDescriptionUUID = BluetoothUUID(UInt16(0x2901))
    public static let clientConfigurationUUID = BluetoothUUID(UInt16(0x2902))
    public static let presentationFormatUUID = BluetoothUUID(UInt16(0x2904))

    /// Decodes the value of the descriptor `uuid`.
    /// - Throws: ``SerdeError`` when a known descriptor's value is malformed (wrong length,
    ///   a User Description that is not UTF-8).
    public init(uuid: BluetoothUUID, bytes: [UInt8]) throws(SerdeError) {
        switch uuid {
        case Self.userDescriptionUUID:
            guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidText(encoding: .utf8) }
            self = .userDescription(text)
        case Self.presentationFormatUUID:
            self = .presentationFormat(try PresentationFormat(bytes: bytes))
        case Self.clientConfigurationUUID:
            guard bytes.count == 2 else { throw .wrongLength(type: "Client Characteristic Configuration", expected: 2, actual: bytes.count) }
            self = .clientConfiguration(notifications: bytes[0] & 0x01 != 0, indications: bytes[0] & 0x02 != 0)
        default:
            self = .other(bytes)
        }
    }

    /// `"Heart rate"` (quoted), `uint8, exponent 0, unit 0x27AD (percentage), …`,
    /// `notifications on, indications off`, or the octets in hex.
    public var description: String {
        switch self {
        case let .userDescription(text): return "\"\(text)\""
        case let .presentationFormat(format): return format.description
        case let .clientConfiguration(notifications, indications):
            return "notifications \(notifications ? "on" : "off"), indications \(indications ? "on" : "off")"
        case let .other(bytes): return Hex.encode(bytes)
        }
    }
}

/// The seven octets of a Characteristic Presentation Format descriptor, with the names of
/// its format and unit where the Assigned Numbers give them.
public struct PresentationFormat: Hashable, Sendable, CustomStringConvertible {
    /// Assigned Numbers 2.4.1, e.g. 0x04 uint8, 0x16 medfloat16 (SFLOAT), 0x19 utf8s.
    public var format: UInt8
    /// The value is multiplied by 10 to this power.
    public var exponent: Int8
    /// A unit UUID (Assigned Numbers 3.5), e.g. 0x27AD percentage.
    public var unit: UInt16
    /// 0x01: the Bluetooth SIG name space.
    public var namespace: UInt8
    /// The description, within the name space.
    public var descriptionValue: UInt16

    public init(bytes: [UInt8]) throws(SerdeError) {
        guard bytes.count == 7 else { throw .wrongLength(type: "Characteristic Presentation Format", expected: 7, actual: bytes.count) }
        format = bytes[0]
        exponent = Int8(bitPattern: bytes[1])
        unit = ByteReader.integer(littleEndian: bytes[2...3])
        namespace = bytes[4]
        descriptionValue = ByteReader.integer(littleEndian: bytes[5...6])
    }

    /// The format's name (`uint8`, `medfloat16`, …), `nil` when reserved.
    public var formatName: String? { Self.formatNames[format] }

    /// The unit's name for common units (`percentage`, `degree Celsius`, …).
    public var unitName: String? { Self.unitNames[unit] }

    public var description: String {
        let formatText = formatName ?? "format \(Hex.format(format))"
        let unitText = Hex.format(unit) + (unitName.map { " (\($0))" } ?? "")
        let namespaceText = namespace == 0x01 ? "Bluetooth SIG" : Hex.format(namespace)
        return "\(formatText), exponent \(exponent), unit \(unitText), namespace \(namespaceText), description \(Hex.format(descriptionValue))"
    }

    /// Assigned Numbers 2.4.1, Characteristic Presentation Format, Formats.
    static let formatNames: [UInt8: String] = [
        0x01: "boolean", 0x02: "uint2", 0x03: "uint4", 0x04: "uint8", 0x05: "uint12", 0x06: "uint16", 0x07: "uint24",
        0x08: "uint32", 0x09: "uint48", 0x0A: "uint64", 0x0B: "uint128", 0x0C: "sint8", 0x0D: "sint12", 0x0E: "sint16",
        0x0F: "sint24", 0x10: "sint32", 0x11: "sint48", 0x12: "sint64", 0x13: "sint128", 0x14: "float32", 0x15: "float64",
        0x16: "medfloat16", 0x17: "medfloat32", 0x18: "uint16[2]", 0x19: "utf8s", 0x1A: "utf16s", 0x1B: "struct", 0x1C: "medASN1",
    ]

    /// A few units of Assigned Numbers 3.5.
    static let unitNames: [UInt16: String] = [
        0x2700: "unitless", 0x2703: "second", 0x2728: "volt", 0x272F: "degree Celsius", 0x27A7: "beats per minute",
        0x27AD: "percentage",
    ]
}
