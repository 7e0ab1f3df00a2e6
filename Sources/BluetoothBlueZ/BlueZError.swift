import BluetoothHost
import DBus

/// What went wrong between Bluejay and BlueZ, each with a sentence that says what to do.
///
/// Errors that mean what our host's errors mean become those (``BluetoothHost/HostError``):
/// a peer's ATT refusal is ``BluetoothHost/HostError/att(_:)`` (so Bluejay raises the link's
/// security after "Not paired" as it does after Insufficient Authentication), a connection
/// that does not come up in time ``BluetoothHost/HostError/connectionTimeout(_:)``. See
/// ``BlueZError/hostError(_:operation:peer:)``.
public enum BlueZError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system bus cannot be reached (no dbus-daemon, or no socket where it should be).
    case busUnavailable(String)
    /// bluetoothd is not on the system bus: not running, or restarting.
    case daemonUnavailable(String)
    /// The bus's security policy refused a call to (or a name of) BlueZ.
    case accessDenied(operation: String, message: String)
    /// BlueZ has no such adapter (or none at all).
    case adapterNotFound(String)
    /// BlueZ refused or failed the operation: `org.bluez.Error.*` with its message.
    case refused(operation: String, name: String, message: String)
    /// What BlueZ's API cannot give: what, and why.
    case unsupported(String)
    /// BlueZ answered with something this backend cannot read.
    case unexpectedAnswer(String)

    public var description: String {
        switch self {
        case let .busUnavailable(why):
            return "the D-Bus system bus cannot be reached (\(why)): start dbus-daemon (systemctl start dbus), "
                + "or set DBUS_SYSTEM_BUS_ADDRESS to where it listens"
        case let .daemonUnavailable(why):
            return "BlueZ (bluetoothd) is not running on the system bus (\(why)): start it (systemctl start bluetooth), "
                + "or use our own host on an adapter with --hci hciN"
        case let .accessDenied(operation, message):
            return "the D-Bus policy refused \(operation) (\(message)): allow this user to talk to org.bluez in "
                + "/etc/dbus-1/system.d/bluetooth.conf (a <policy user=\"NAME\"> or <policy group=\"bluetooth\"> with "
                + "<allow send_destination=\"org.bluez\"/>; for the agent, GATT application and advertisement also "
                + "<allow send_interface=\"org.bluez.Agent1\"/> and the others), or run as root, then log in again"
        case let .adapterNotFound(what):
            return "BlueZ has no adapter \(what): `bluejay adapters` lists the adapters BlueZ keeps; is the controller plugged in and not blocked (rfkill list)?"
        case let .refused(operation, name, message):
            let text = "\(operation) failed: BlueZ answered \(name)\(message.isEmpty ? "" : ": \(message)")"
            return Self.advice(for: name, message: message).map { "\(text). \($0)" } ?? text
        case let .unsupported(what):
            return "not supported over BlueZ: \(what)"
        case let .unexpectedAnswer(what):
            return "BlueZ answered what this backend cannot read: \(what) (a BlueZ version this backend does not know? it is tested with 5.66)"
        }
    }

    /// What to do about an `org.bluez.Error.*`.
    static func advice(for name: String, message: String) -> String? {
        switch name.split(separator: ".").last.map(String.init) ?? name {
        case "NotReady":
            return "The adapter is not ready: power it on (bluetoothctl power on) and check rfkill"
        case "InProgress":
            return "The same operation is already running on that adapter or device; wait for it or cancel it"
        case "AlreadyConnected":
            return "The device is already connected"
        case "NotConnected":
            return "The device is not connected: connect first"
        case "AuthenticationFailed", "AuthenticationRejected", "AuthenticationCanceled", "AuthenticationTimeout":
            return "Pairing failed: check the passkey or comparison on both sides; remove the old bond on both sides if one side lost it"
        case "ConnectionAttemptFailed":
            return "The device did not accept the connection: is it advertising, connectable and in range?"
        case "DoesNotExist":
            return "BlueZ does not know that device (any more): scan for it first"
        case "NotPermitted", "NotAuthorized":
            return "The peer refused it for lack of permission, encryption or authorization: pair (bluejay pair), then try again"
        case "NotSupported":
            return "BlueZ or the peer does not support that operation"
        case "InvalidArguments":
            return nil
        default:
            return nil
        }
    }
}

extension BlueZError {
    /// `org.bluez.Error.AlreadyConnected`: for a connect, the link is there, as asked.
    /// Another client's change of the same thing is under way (`Busy`, `InProgress`).
    var isBusy: Bool {
        if case let .refused(_, name, _) = self { return name == "org.bluez.Error.Busy" || name == "org.bluez.Error.InProgress" }
        return false
    }

    var isAlreadyConnected: Bool {
        if case let .refused(_, name, _) = self { return name == "org.bluez.Error.AlreadyConnected" }
        return false
    }

    /// The error a failed call to BlueZ means: ``BluetoothHost/HostError`` where our host has the same
    /// meaning (ATT refusals, the link gone, a timeout, cancellation), else a ``BlueZError``.
    static func from(_ error: DBusError, operation: String) -> any Error {
        switch error {
        case let .errorReply(name, message):
            if name == .accessDenied { return BlueZError.accessDenied(operation: operation, message: message) }
            // No bluetoothd: the bus has no owner for org.bluez, or tried to start one (bus
            // activation) and failed: Spawn.* from the bus's launch helper, systemd's errors
            // when the unit is missing or masked.
            if name == .serviceUnknown || name == .nameHasNoOwner || name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
                || name.rawValue == "org.freedesktop.systemd1.NoSuchUnit" || name.rawValue == "org.freedesktop.systemd1.UnitMasked" {
                return BlueZError.daemonUnavailable("\(operation): \(name.rawValue)")
            }
            if name == .unknownObject || name == .unknownMethod && message.contains("/org/bluez/hci") {
                return BlueZError.refused(operation: operation, name: name.rawValue, message: message)
            }
            if name.rawValue.hasPrefix("org.bluez.Error"), let att = attError(name: name.rawValue, message: message) {
                return HostError.att(att)
            }
            return BlueZError.refused(operation: operation, name: name.rawValue, message: message)
        case .cancelled:
            return HostError.cancelled
        case let .timedOut(_, after):
            return HostError.procedureTimeout("\(operation) (no answer from bluetoothd within \(after))")
        case let .connectionClosed(reason):
            return BlueZError.daemonUnavailable("the system bus connection closed: \(reason)")
        case let .connectFailed(address, _, _):
            return BlueZError.busUnavailable("\(address): \(error)")
        case let .authenticationFailed(why):
            return BlueZError.busUnavailable("authentication: \(why)")
        case .unexpectedReply:
            return BlueZError.unexpectedAnswer("\(operation): \(error)")
        default:
            return BlueZError.refused(operation: operation, name: "D-Bus", message: "\(error)")
        }
    }

    /// The ATT error behind a GATT refusal of BlueZ's (its gatt-client.c names some codes and
    /// writes the rest as "ATT error: 0xNN"); `nil` for errors that are not the peer's.
    static func attError(name: String, message: String) -> ATTError? {
        let code: ATTErrorCode
        if let range = message.range(of: "ATT error: 0x"),
           let raw = UInt8(message[range.upperBound...].prefix(2), radix: 16) {
            code = ATTErrorCode(rawValue: raw)
        } else {
            switch (name.split(separator: ".").last.map(String.init) ?? "", message) {
            case ("NotPermitted", "Read not permitted"): code = .readNotPermitted
            case ("NotPermitted", "Write not permitted"): code = .writeNotPermitted
            // BlueZ says "Not paired" for Insufficient Authentication, Encryption and Key Size alike.
            case ("NotPermitted", "Not paired"): code = .insufficientAuthentication
            case ("NotAuthorized", _): code = .insufficientAuthorization
            case ("InvalidOffset", _), ("InvalidArguments", "Invalid offset"): code = .invalidOffset
            case ("InvalidValueLength", _), ("InvalidArguments", "Invalid Length"): code = .invalidAttributeValueLength
            default: return nil
            }
        }
        // BlueZ does not say which request or handle; the caller knows the handle.
        return ATTError(requestOpcode: ATTOpcode(rawValue: 0), handle: 0, code: code)
    }
}
