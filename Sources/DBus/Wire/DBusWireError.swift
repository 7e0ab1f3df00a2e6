/// Why bytes are not a valid D-Bus message, or why a message cannot be encoded: the message
/// breaks a rule of the D-Bus Specification ("Message Protocol"). A peer's malformed message
/// reaches the app as ``DBusError/protocolViolation(_:)``, one of ours as
/// ``DBusError/invalidMessage(_:)``.
public enum DBusWireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before the value at `offset` does (`needed` more bytes).
    case truncated(offset: Int, needed: Int)
    /// A padding byte before an aligned value is not zero.
    case nonZeroPadding(offset: Int)
    /// A signature breaks the grammar or a limit (255 bytes, 32 nested arrays, 32 nested structs).
    case invalidSignature(String, reason: String)
    /// Containers nest deeper than 64 levels, counting those inside variants.
    case nestedTooDeeply(limit: Int)
    /// An array longer than 64 MiB (2^26 bytes).
    case arrayTooLong(Int)
    /// The elements of an array do not end where its length says.
    case arrayLengthMismatch(offset: Int)
    /// A message longer than the limit (the specification's 128 MiB, or the connection's).
    case messageTooLong(Int, limit: Int)
    /// A boolean other than 0 or 1.
    case invalidBoolean(UInt32, offset: Int)
    /// A string that is not UTF-8, contains a nul byte, or lacks its terminating nul.
    case invalidString(offset: Int, reason: String)
    /// An object path that breaks the rules (`/`, or `/`-separated non-empty `[A-Za-z0-9_]` elements).
    case invalidObjectPath(String)
    /// A bus, interface, member or error name that breaks the rules.
    case invalidName(kind: String, name: String)
    /// The fixed header or a header field is invalid (endianness, version, serial, a missing
    /// required field, a field of the wrong type, a field twice).
    case invalidHeader(String)
    /// A Unix file descriptor index past the descriptors sent with the message.
    case fileDescriptorIndex(UInt32, count: Int)
    /// The header names more Unix file descriptors than came with the message.
    case missingFileDescriptors(declared: Int, received: Int)
    /// More Unix file descriptors than a message may carry.
    case tooManyFileDescriptors(Int, limit: Int)
    /// The body does not end where the header says.
    case bodyLengthMismatch(declared: Int, used: Int)
    /// A value does not have the type its container or the body's signature says.
    case typeMismatch(expected: String, got: String)

    public var description: String {
        switch self {
        case let .truncated(offset, needed):
            return "the message ends \(needed) byte(s) too early, at offset \(offset)"
        case let .nonZeroPadding(offset):
            return "alignment padding at offset \(offset) is not zero"
        case let .invalidSignature(signature, reason):
            return "invalid signature \"\(signature)\": \(reason)"
        case let .nestedTooDeeply(limit):
            return "containers nest deeper than \(limit) levels"
        case let .arrayTooLong(length):
            return "an array of \(length) bytes is longer than the 64 MiB limit"
        case let .arrayLengthMismatch(offset):
            return "the elements of the array at offset \(offset) do not end where its length says"
        case let .messageTooLong(length, limit):
            return "a message of \(length) bytes is longer than the \(limit)-byte limit"
        case let .invalidBoolean(value, offset):
            return "boolean \(value) at offset \(offset) is neither 0 nor 1"
        case let .invalidString(offset, reason):
            return "invalid string at offset \(offset): \(reason)"
        case let .invalidObjectPath(path):
            return "invalid object path \"\(path)\": a path is \"/\" or \"/\"-separated elements of A-Z, a-z, 0-9 and _, with no trailing \"/\""
        case let .invalidName(kind, name):
            return "invalid \(kind) \"\(name)\""
        case let .invalidHeader(reason):
            return "invalid message header: \(reason)"
        case let .fileDescriptorIndex(index, count):
            return "Unix file descriptor index \(index) is past the \(count) descriptor(s) sent with the message"
        case let .missingFileDescriptors(declared, received):
            return "the header names \(declared) Unix file descriptor(s) but \(received) came with the message"
        case let .tooManyFileDescriptors(count, limit):
            return "\(count) Unix file descriptors in one message, more than the \(limit) allowed"
        case let .bodyLengthMismatch(declared, used):
            return "the body is \(declared) bytes long but its signature's values take \(used)"
        case let .typeMismatch(expected, got):
            return "a value of type \"\(got)\" where \"\(expected)\" is expected"
        }
    }
}
