/// The name of a D-Bus error, such as `org.freedesktop.DBus.Error.AccessDenied` or
/// `org.bluez.Error.NotReady`: what an error reply is, and what ``DBusError/errorReply(name:message:)``
/// carries.
///
/// The errors of the bus and of the standard interfaces are constants, so a caller matches them
/// by name:
///
/// ```swift
/// do { try await connection.requestName("org.example.Agent") }
/// catch DBusError.errorReply(name: .accessDenied, let message) { … }
/// ```
public struct DBusErrorName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Any name; one that breaks the rules for error names (two or more `.`-separated elements
    /// of `[A-Za-z0-9_]`, not starting with a digit) is replaced by ``failed`` when sent.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Any name (see ``init(rawValue:)``).
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// A name written as a string literal: `"org.bluez.Error.Rejected"`.
    public init(stringLiteral value: String) {
        rawValue = value
    }

    public var description: String { rawValue }

    /// Whether the name follows the rules for error names.
    public var isValid: Bool { DBusNames.isError(rawValue) }

    /// A generic failure.
    public static let failed: DBusErrorName = "org.freedesktop.DBus.Error.Failed"
    /// The bus or the peer refused for lack of memory.
    public static let noMemory: DBusErrorName = "org.freedesktop.DBus.Error.NoMemory"
    /// No program owns the destination name, and the bus could not start one.
    public static let serviceUnknown: DBusErrorName = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The name has no owner (GetNameOwner of a name nobody owns).
    public static let nameHasNoOwner: DBusErrorName = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// No answer came in time (the bus's reply timeout), or the peer left before answering.
    public static let noReply: DBusErrorName = "org.freedesktop.DBus.Error.NoReply"
    /// An I/O error on the bus's side.
    public static let ioError: DBusErrorName = "org.freedesktop.DBus.Error.IOError"
    /// The address could not be parsed.
    public static let badAddress: DBusErrorName = "org.freedesktop.DBus.Error.BadAddress"
    /// The operation is not supported.
    public static let notSupported: DBusErrorName = "org.freedesktop.DBus.Error.NotSupported"
    /// A limit was reached (too many pending replies, match rules, names or calls).
    public static let limitsExceeded: DBusErrorName = "org.freedesktop.DBus.Error.LimitsExceeded"
    /// The bus's security policy refused the message or the name.
    public static let accessDenied: DBusErrorName = "org.freedesktop.DBus.Error.AccessDenied"
    /// Authentication failed.
    public static let authFailed: DBusErrorName = "org.freedesktop.DBus.Error.AuthFailed"
    /// The call timed out (a service's own timeout).
    public static let timeout: DBusErrorName = "org.freedesktop.DBus.Error.Timeout"
    /// The call timed out (older name used by some services).
    public static let timedOut: DBusErrorName = "org.freedesktop.DBus.Error.TimedOut"
    /// The connection is not connected.
    public static let disconnected: DBusErrorName = "org.freedesktop.DBus.Error.Disconnected"
    /// The arguments do not have the method's signature or are invalid.
    public static let invalidArgs: DBusErrorName = "org.freedesktop.DBus.Error.InvalidArgs"
    /// The object has no method of that name on that interface.
    public static let unknownMethod: DBusErrorName = "org.freedesktop.DBus.Error.UnknownMethod"
    /// There is no object at that path.
    public static let unknownObject: DBusErrorName = "org.freedesktop.DBus.Error.UnknownObject"
    /// The object has no such interface.
    public static let unknownInterface: DBusErrorName = "org.freedesktop.DBus.Error.UnknownInterface"
    /// The interface has no such property.
    public static let unknownProperty: DBusErrorName = "org.freedesktop.DBus.Error.UnknownProperty"
    /// The property cannot be written.
    public static let propertyReadOnly: DBusErrorName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    /// RemoveMatch of a rule that was never added.
    public static let matchRuleNotFound: DBusErrorName = "org.freedesktop.DBus.Error.MatchRuleNotFound"
    /// AddMatch of a rule that does not parse.
    public static let matchRuleInvalid: DBusErrorName = "org.freedesktop.DBus.Error.MatchRuleInvalid"
    /// A message that does not follow the signature or the protocol.
    public static let inconsistentMessage: DBusErrorName = "org.freedesktop.DBus.Error.InconsistentMessage"
    /// Interactive authorization (polkit) was needed but not allowed by the call's flags.
    public static let interactiveAuthorizationRequired: DBusErrorName = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
}
