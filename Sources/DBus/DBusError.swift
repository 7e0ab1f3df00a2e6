#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a D-Bus operation failed. Each case says what happened in a sentence a user can act on
/// (``description``).
///
/// An error *reply* from the bus or a peer is ``errorReply(name:message:)``; match its name to
/// tell the bus's own errors apart:
///
/// ```swift
/// do {
///     try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StartDiscovery")
/// } catch DBusError.errorReply(name: .serviceUnknown, _) {
///     // bluetoothd is not running
/// } catch DBusError.errorReply(name: .accessDenied, _) {
///     // the bus's policy refuses this user
/// } catch DBusError.connectionClosed {
///     // the bus went away
/// }
/// ```
///
/// An exported method's handler throws ``errorReply(name:message:)`` to answer with that error.
public enum DBusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bus or the peer answered with an error (or, thrown by an exported method's
    /// handler, the error to answer with).
    case errorReply(name: DBusErrorName, message: String)
    /// No answer came within the call's timeout (the call described, the timeout).
    case timedOut(String, after: Duration)
    /// The task that waited was cancelled.
    case cancelled
    /// The connection is closed: by ``DBusConnection/close()``, by the peer, or because it broke.
    case connectionClosed(reason: String)
    /// The address cannot be used (D-Bus Specification, "Server Addresses").
    case invalidAddress(String, reason: String)
    /// Connecting to the address failed.
    case connectFailed(address: String, errno: Int32, hint: String)
    /// The SASL handshake failed.
    case authenticationFailed(String)
    /// The peer sent a message that breaks the protocol; the connection is closed.
    case protocolViolation(DBusWireError)
    /// A message of ours cannot be sent as it is.
    case invalidMessage(DBusWireError)
    /// An answer or a signal does not carry the arguments expected.
    case unexpectedReply(String)
    /// A bound was reached (calls waiting for answers, bytes waiting to be sent, calls being
    /// handled); the operation was refused and may be retried.
    case limitReached(String)
    /// A system call failed.
    case systemCallFailed(String, errno: Int32)
    /// The operation is not available (a transport, or descriptor passing the peer refused).
    case unsupported(String)
    /// An argument is not acceptable (a path exported twice, a name that breaks the rules).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case let .errorReply(name, message):
            let text = message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)"
            if let advice = Self.advice(for: name) { return "\(text). \(advice)" }
            return text
        case let .timedOut(call, after):
            return "no answer to \(call) within \(after); the peer may be busy, stuck or gone"
        case .cancelled:
            return "the D-Bus operation was cancelled"
        case let .connectionClosed(reason):
            return "the D-Bus connection is closed: \(reason)"
        case let .invalidAddress(address, reason):
            return "cannot use the D-Bus address \"\(address)\": \(reason)"
        case let .connectFailed(address, errno, hint):
            return "cannot connect to the D-Bus address \(address): \(systemErrorMessage(errno))" + (hint.isEmpty ? "" : ". \(hint)")
        case let .authenticationFailed(reason):
            return "D-Bus authentication failed: \(reason)"
        case let .protocolViolation(error):
            return "the peer broke the D-Bus protocol (\(error)); the connection is closed"
        case let .invalidMessage(error):
            return "cannot send the D-Bus message: \(error)"
        case let .unexpectedReply(reason):
            return "unexpected D-Bus answer: \(reason)"
        case let .limitReached(what):
            return "D-Bus limit reached: \(what)"
        case let .systemCallFailed(call, errno):
            return "\(call) failed: \(systemErrorMessage(errno))"
        case let .unsupported(what):
            return "not supported: \(what)"
        case let .invalidArgument(reason):
            return reason
        }
    }

    /// What to do about the bus's own errors.
    static func advice(for name: DBusErrorName) -> String? {
        switch name {
        case .accessDenied:
            return "The bus's security policy refused it: on the system bus, a policy file in /etc/dbus-1/system.d/ must allow "
                + "this user to send to (or own) that name; for BlueZ, run as root or as a member of the group its policy allows "
                + "(often \"bluetooth\"), then log in again"
        case .serviceUnknown:
            return "No program owns that name on the bus: is the service (for BlueZ, bluetoothd) running?"
        case .nameHasNoOwner:
            return "No program owns that name on the bus"
        case .unknownObject:
            return "The peer has no object at that path (for BlueZ: is the adapter present, or the device still known?)"
        case .unknownMethod, .unknownInterface:
            return "The peer does not implement that method or interface (a different version of the service?)"
        case .noReply:
            return "The peer did not answer in time or left before answering"
        case .limitsExceeded:
            return "The bus refused it for a limit (too many pending calls, match rules or names for this connection)"
        default:
            return nil
        }
    }
}

/// `strerror(3)` of `code`.
func systemErrorMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}
