import BluetoothCore
import BluetoothTransport

/// Why an HCI command or an ACL transmission failed.
public enum HCIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The controller answered with a non-zero status.
    case commandFailed(HCIOpcode, HCIStatus)
    /// The controller did not answer within the command timeout.
    case commandTimeout(HCIOpcode)
    /// The controller's answer could not be decoded.
    case malformedResponse(HCIOpcode, PacketDecodingError)
    /// The transport is gone; nothing more can be sent.
    case transportClosed(TransportError?)
    /// The connection ended before the data could be sent.
    case connectionClosed(connectionHandle: UInt16)
    /// The connection's send queue is full (``HCILimits/aclQueuedBytesPerConnection``): the
    /// PDU was not queued.
    case sendQueueFull(connectionHandle: UInt16)
    /// Too many commands wait for the controller (``HCILimits/waitingCommands``): the command
    /// was not queued.
    case commandQueueFull(HCIOpcode)
    /// The controller cannot do what was asked (a missing command or feature).
    case unsupported(String)
    /// The caller cancelled the operation.
    case cancelled

    public var description: String {
        switch self {
        case let .commandFailed(opcode, status): return "\(opcode) failed: \(status)"
        case let .commandTimeout(opcode): return "\(opcode) got no answer from the controller"
        case let .malformedResponse(opcode, error): return "\(opcode) returned a malformed answer: \(error)"
        case let .transportClosed(error): return error.map { "\($0)" } ?? "the HCI transport is closed"
        case let .connectionClosed(handle): return "connection \(Hex.format(handle)) closed before the data was sent"
        case let .sendQueueFull(handle): return "the send queue of connection \(Hex.format(handle)) is full"
        case let .commandQueueFull(opcode): return "\(opcode) not sent: too many commands wait for the controller"
        case let .unsupported(what): return "the controller does not support \(what)"
        case .cancelled: return "cancelled"
        }
    }
}
