/// Why bytes could not be turned into a value, or a value into bytes. Every decode in this
/// module checks lengths first and throws one of these instead of trapping.
public enum SerdeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The value takes exactly `expected` octets.
    case wrongLength(type: String, expected: Int, actual: Int)
    /// An array of values needs a whole number of `elementSize`-octet elements.
    case notAMultiple(type: String, elementSize: Int, actual: Int)
    /// Reading at an offset needs `needed` octets from there.
    case tooShort(type: String, offset: Int, needed: Int, available: Int)
    /// The octets decode to a raw value the type does not accept.
    case invalidRawValue(type: String, value: String)
    /// The octets are not valid text in the encoding.
    case invalidText(encoding: StringEncoding)
    /// The text has characters the encoding cannot represent.
    case unencodable(encoding: StringEncoding)
    /// A structured value is malformed; the text says how.
    case invalidValue(type: String, reason: String)

    public var description: String {
        switch self {
        case let .wrongLength(type, expected, actual):
            return "\(type) takes \(expected) octet\(expected == 1 ? "" : "s"), not \(actual)"
        case let .notAMultiple(type, size, actual):
            return "\(actual) octets are not a whole number of \(type) values of \(size) octets"
        case let .tooShort(type, offset, needed, available):
            return "\(type) at offset \(offset) needs \(needed) octets but only \(max(0, available - offset)) remain"
        case let .invalidRawValue(type, value):
            return "\(value) is not a valid \(type)"
        case let .invalidText(encoding):
            return "the octets are not valid \(encoding) text"
        case let .unencodable(encoding):
            return "the text cannot be encoded as \(encoding)"
        case let .invalidValue(type, reason):
            return "invalid \(type): \(reason)"
        }
    }
}
