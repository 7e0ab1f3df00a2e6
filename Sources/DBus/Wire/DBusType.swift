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

    /// The basic type of a type code (`nil` for containers and unknown codes).
    static func basic(code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        default: return nil
        }
    }

    /// The type code of a basic type (`nil` for containers); the inverse of ``basic(code:)``.
    var basicCode: UInt8? {
        switch self {
        case .byte: return UInt8(ascii: "y")
        case .boolean: return UInt8(ascii: "b")
        case .int16: return UInt8(ascii: "n")
        case .uint16: return UInt8(ascii: "q")
        case .int32: return UInt8(ascii: "i")
        case .uint32: return UInt8(ascii: "u")
        case .int64: return UInt8(ascii: "x")
        case .uint64: return UInt8(ascii: "t")
        case .double: return UInt8(ascii: "d")
        case .string: return UInt8(ascii: "s")
        case .objectPath: return UInt8(ascii: "o")
        case .signature: return UInt8(ascii: "g")
        case .unixFD: return UInt8(ascii: "h")
        case .array, .struct, .dictEntry, .variant: return nil
        }
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
            if let code = basicCode { bytes.append(code) }
        }
    }
}
