/// Why a packet received from a controller or a peer could not be decoded.
///
/// Every decoder in the stack throws this instead of trapping, so malformed input from the
/// air or from a faulty controller is reported, logged and dropped, never fatal.
public enum PacketDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The packet ended before a field could be read.
    case truncated(context: String, needed: Int, available: Int)
    /// Bytes were left over after the last field of a fixed-size packet.
    case trailingBytes(context: String, count: Int)
    /// A length field disagrees with the number of bytes that follow it.
    case lengthMismatch(context: String, declared: Int, actual: Int)
    /// A field holds a value the specification does not allow.
    case invalidValue(context: String, field: String, value: UInt64)
    /// The opcode, event code or type byte is not one this decoder knows.
    case unknownOpcode(context: String, opcode: UInt64)

    /// The packet the error is about.
    public var context: String {
        switch self {
        case let .truncated(context, _, _), let .trailingBytes(context, _), let .lengthMismatch(context, _, _),
             let .invalidValue(context, _, _), let .unknownOpcode(context, _):
            return context
        }
    }

    /// The same error, naming another packet (decoders use a constant context on the fast path
    /// and name the packet precisely only when something goes wrong).
    public func replacingContext(_ newContext: String) -> PacketDecodingError {
        switch self {
        case let .truncated(_, needed, available): return .truncated(context: newContext, needed: needed, available: available)
        case let .trailingBytes(_, count): return .trailingBytes(context: newContext, count: count)
        case let .lengthMismatch(_, declared, actual): return .lengthMismatch(context: newContext, declared: declared, actual: actual)
        case let .invalidValue(_, field, value): return .invalidValue(context: newContext, field: field, value: value)
        case let .unknownOpcode(_, opcode): return .unknownOpcode(context: newContext, opcode: opcode)
        }
    }

    public var description: String {
        switch self {
        case let .truncated(context, needed, available):
            return "\(context): truncated, needed \(needed) more byte(s) but only \(available) left"
        case let .trailingBytes(context, count):
            return "\(context): \(count) unexpected trailing byte(s)"
        case let .lengthMismatch(context, declared, actual):
            return "\(context): length field says \(declared) byte(s) but \(actual) follow"
        case let .invalidValue(context, field, value):
            return "\(context): invalid \(field) \(Hex.format(value))"
        case let .unknownOpcode(context, opcode):
            return "\(context): unknown opcode \(Hex.format(opcode))"
        }
    }
}
