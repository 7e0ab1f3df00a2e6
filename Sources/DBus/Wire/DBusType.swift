/// One complete D-Bus type (D-Bus Specification, "Type System"): what a signature is made of.
///
/// A dictionary is an array of ``dictEntry(key:value:)`` (`a{sv}`); a dict entry appears
/// nowhere else. ``DBusSignature`` parses and checks signatures; a type built by hand is
/// checked when a message holding it is encoded.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte
    case boolean
    case int16
    case uint16
    case int32
    case uint32
    case int64
    case uint64
    case double
    case string
    case objectPath
    case signature
    /// A Unix file descriptor: on the wire, an index into the descriptors sent with the message.
    case unixFD
    case array(DBusType)
    case `struct`([DBusType])
    /// `{KV}`: only as the element of an array, with a basic key.
    case dictEntry(key: DBusType, value: DBusType)
    case variant

    /// The basic types by type code, declared once for the parser, the encoder and ``code``.
    static let basicTypes: [(code: UInt8, type: DBusType)] = [
        (UInt8(ascii: "y"), .byte), (UInt8(ascii: "b"), .boolean), (UInt8(ascii: "n"), .int16), (UInt8(ascii: "q"), .uint16),
        (UInt8(ascii: "i"), .int32), (UInt8(ascii: "u"), .uint32), (UInt8(ascii: "x"), .int64), (UInt8(ascii: "t"), .uint64),
        (UInt8(ascii: "d"), .double), (UInt8(ascii: "s"), .string), (UInt8(ascii: "o"), .objectPath), (UInt8(ascii: "g"), .signature),
        (UInt8(ascii: "h"), .unixFD),
    ]

    /// The basic type of a type code (`nil` for containers and unknown codes).
    static func basic(code: UInt8) -> DBusType? {
        basicTypes.first { $0.code == code }?.type
    }

    /// Whether this is a basic type, which may be a dictionary's key.
    public var isBasic: Bool {
        switch self {
        case .array, .struct, .dictEntry, .variant: return false
        default: return true
        }
    }

    /// The boundary the type's values start on: its size for numbers, 4 for strings, object
    /// paths and arrays (their length), 1 for signatures and variants, 8 for structs and dict
    /// entries (D-Bus Specification, "Marshaling (Wire Format)").
    public var alignment: Int {
        switch self {
        case .byte, .signature, .variant: return 1
        case .int16, .uint16: return 2
        case .boolean, .int32, .uint32, .unixFD, .string, .objectPath, .array: return 4
        case .int64, .uint64, .double, .struct, .dictEntry: return 8
        }
    }

    /// The signature of this one type, e.g. `a{sv}`.
    public var description: String {
        var bytes: [UInt8] = []
        appendSignature(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    func appendSignature(to bytes: inout [UInt8]) {
        switch self {
        case let .array(element):
            bytes.append(UInt8(ascii: "a"))
            element.appendSignature(to: &bytes)
        case let .struct(fields):
            bytes.append(UInt8(ascii: "("))
            for field in fields { field.appendSignature(to: &bytes) }
            bytes.append(UInt8(ascii: ")"))
        case let .dictEntry(key, value):
            bytes.append(UInt8(ascii: "{"))
            key.appendSignature(to: &bytes)
            value.appendSignature(to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        case .variant:
            bytes.append(UInt8(ascii: "v"))
        default:
            if let code = Self.basicTypes.first(where: { $0.type == self })?.code { bytes.append(code) }
        }
    }
}
