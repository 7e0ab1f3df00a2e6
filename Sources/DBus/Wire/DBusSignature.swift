/// A checked D-Bus signature: a sequence of complete types, as a message body or a variant
/// carries it (D-Bus Specification, "Signatures").
///
/// Every signature that exists passes the specification's rules: at most 255 bytes, at most 32
/// arrays and 32 structs (dict entries count as structs) nested in each other, no empty
/// struct, dict entries only as array elements with a basic key.
///
/// ```swift
/// let signature = try DBusSignature("a{sv}")
/// signature.types   // [.array(.dictEntry(key: .string, value: .variant))]
/// ```
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible {
    /// The complete types, in order.
    public let types: [DBusType]
    /// The signature as text, e.g. `oa{sa{sv}}`.
    public let description: String

    /// The empty signature of a message with no arguments.
    public static let empty = DBusSignature(checkedTypes: [], text: "")

    /// The longest signature (D-Bus Specification, "Valid Signatures").
    public static let maximumLength = 255
    /// How many arrays, and separately how many structs, may nest in each other.
    public static let maximumNesting = 32

    /// Parses and checks `text`.
    public init(_ text: String) throws(DBusWireError) {
        try self.init(bytes: Array(text.utf8)[...])
    }

    /// The signature of `types`, checked against the same rules as a parsed one.
    public init(_ types: [DBusType]) throws(DBusWireError) {
        var bytes: [UInt8] = []
        for type in types { type.appendSignature(to: &bytes) }
        try self.init(bytes: bytes[...])
    }

    /// A signature as it appears on the wire (without its length and nul).
    init(bytes: ArraySlice<UInt8>) throws(DBusWireError) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard bytes.count <= Self.maximumLength else {
            throw .invalidSignature(String(text.prefix(64)) + "…", reason: "longer than \(Self.maximumLength) bytes")
        }
        var parser = Parser(bytes: bytes, text: text)
        var types: [DBusType] = []
        while !parser.isAtEnd {
            types.append(try parser.completeType(arrays: 0, structs: 0))
        }
        self.init(checkedTypes: types, text: text)
    }

    private init(checkedTypes: [DBusType], text: String) {
        types = checkedTypes
        description = text
    }

    /// The signature of one complete type, as a variant's signature must be.
    static func single(_ bytes: ArraySlice<UInt8>) throws(DBusWireError) -> DBusType {
        let signature = try DBusSignature(bytes: bytes)
        guard signature.types.count == 1, let type = signature.types.first else {
            throw .invalidSignature(signature.description, reason: "a variant holds exactly one complete type")
        }
        return type
    }

    /// A recursive-descent parser over the signature's bytes. Its recursion is bounded by
    /// the nesting limits it checks (and by the 255 bytes).
    private struct Parser {
        let bytes: ArraySlice<UInt8>
        let text: String
        var index: Int

        init(bytes: ArraySlice<UInt8>, text: String) {
            self.bytes = bytes
            self.text = text
            index = bytes.startIndex
        }

        var isAtEnd: Bool { index >= bytes.endIndex }

        func failure(_ reason: String) -> DBusWireError {
            .invalidSignature(text, reason: reason)
        }

        mutating func next() throws(DBusWireError) -> UInt8 {
            guard index < bytes.endIndex else { throw failure("it ends inside a container") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func completeType(arrays: Int, structs: Int) throws(DBusWireError) -> DBusType {
            let code = try next()
            if let basic = DBusType.basic(code: code) { return basic }
            switch code {
            case UInt8(ascii: "v"):
                return .variant
            case UInt8(ascii: "a"):
                guard arrays < DBusSignature.maximumNesting else { throw failure("more than \(DBusSignature.maximumNesting) nested arrays") }
                guard index < bytes.endIndex else { throw failure("an array without an element type") }
                if bytes[index] == UInt8(ascii: "{") {
                    index += 1
                    return .array(try dictEntry(arrays: arrays + 1, structs: structs))
                }
                return .array(try completeType(arrays: arrays + 1, structs: structs))
            case UInt8(ascii: "("):
                guard structs < DBusSignature.maximumNesting else { throw failure("more than \(DBusSignature.maximumNesting) nested structs") }
                var fields: [DBusType] = []
                while true {
                    guard index < bytes.endIndex else { throw failure("a struct without its \")\"") }
                    if bytes[index] == UInt8(ascii: ")") {
                        index += 1
                        break
                    }
                    fields.append(try completeType(arrays: arrays, structs: structs + 1))
                }
                guard !fields.isEmpty else { throw failure("an empty struct") }
                return .struct(fields)
            case UInt8(ascii: "{"):
                throw failure("a dict entry outside an array")
            case UInt8(ascii: ")"), UInt8(ascii: "}"):
                throw failure("an unmatched \"\(Character(Unicode.Scalar(code)))\"")
            default:
                let shown = code >= 0x20 && code < 0x7F ? "\"\(Character(Unicode.Scalar(code)))\"" : "byte \(code)"
                throw failure("unknown type code \(shown)")
            }
        }

        /// After `a{`: a basic key, one value type, `}`. Dict entries count as structs.
        mutating func dictEntry(arrays: Int, structs: Int) throws(DBusWireError) -> DBusType {
            guard structs < DBusSignature.maximumNesting else { throw failure("more than \(DBusSignature.maximumNesting) nested structs") }
            let key = try completeType(arrays: arrays, structs: structs + 1)
            guard key.isBasic else { throw failure("a dict entry's key must be a basic type, not \(key)") }
            guard index < bytes.endIndex, bytes[index] != UInt8(ascii: "}") else { throw failure("a dict entry without a value type") }
            let value = try completeType(arrays: arrays, structs: structs + 1)
            guard try next() == UInt8(ascii: "}") else { throw failure("a dict entry holds exactly one key and one value") }
            return .dictEntry(key: key, value: value)
        }
    }
}
