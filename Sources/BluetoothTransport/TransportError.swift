import BluetoothCore

/// Why a transport could not be opened, or why it stopped.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The transport string is not one of the supported forms.
    case invalidSpecification(String, reason: String)
    /// The operating system refused to open the transport.
    case openFailed(String, errno: Int32, hint: String)
    /// A packet could not be written.
    case writeFailed(String, errno: Int32)
    /// The other end closed the connection or the device went away.
    case connectionLost(String, reason: String)
    /// The byte stream does not follow H4 framing; the transport cannot continue.
    case framing(String, PacketDecodingError)
    /// The transport was closed by this process.
    case closed(String)

    public var description: String {
        switch self {
        case let .invalidSpecification(text, reason):
            return "invalid transport \"\(text)\": \(reason). Use tcp:HOST:PORT, unix:PATH, serial:DEVICE[@BAUD], hciN or virtual"
        case let .openFailed(name, errno, hint):
            return "cannot open \(name): \(SystemError.message(errno))" + (hint.isEmpty ? "" : ". \(hint)")
        case let .writeFailed(name, errno):
            return "cannot write to \(name): \(SystemError.message(errno))"
        case let .connectionLost(name, reason):
            return "transport \(name) lost: \(reason)"
        case let .framing(name, error):
            return "transport \(name) sent a malformed packet: \(error)"
        case let .closed(name):
            return "transport \(name) is closed"
        }
    }
}
