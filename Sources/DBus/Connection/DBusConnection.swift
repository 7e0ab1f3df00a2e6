#if canImport(Glibc)
import Glibc
import Logging

/// A connection to a D-Bus bus (or to a peer): method calls with timeouts, signals through
/// match rules, exported objects.
///
/// ```swift
/// let bus = try await DBusConnection.system()
/// let reply = try await bus.call(destination: "org.bluez", path: .root,
///                                interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
/// for try await added in try await bus.interfacesAdded(sender: "org.bluez") { … }
/// ```
///
/// A thread of the connection's own reads and writes the socket; callers never block on it.
/// Every wait is bounded (``Options/callTimeout``, ``Options/connectTimeout``) and ends when its
/// task is cancelled. The connection closes with ``close()`` or when the last reference to it
/// goes away; then every call waiting fails with ``DBusError/connectionClosed(reason:)`` and
/// every signal stream ends with it.
public final class DBusConnection: Sendable {
    /// The bus's own name, destination of its methods and sender of its signals.
    public static let busName = DBusNames.bus
    /// The bus's object path.
    public static let busPath = DBusObjectPath.bus

    /// How a connection behaves: its limits and waits.
    public struct Options: Sendable {
        /// How long a call waits for its answer unless the call says otherwise (libdbus's
        /// default, 25 s).
        public var callTimeout: Duration = .seconds(25)
        /// How long connecting, authenticating and `Hello` may take together.
        public var connectTimeout: Duration = .seconds(10)
        /// Whether the peer is a bus: `Hello` is called and signals need match rules. `false`
        /// for a direct peer-to-peer connection.
        public var isBus = true
        /// Whether to ask to pass Unix file descriptors (NEGOTIATE_UNIX_FD).
        public var negotiateUnixFileDescriptors = true
        /// The longest message accepted from the peer (the specification's 128 MiB at most).
        public var maximumMessageLength = DBusMessage.maximumLength
        /// The most bytes waiting to be written before sends are refused with
        /// ``DBusError/limitReached(_:)`` (a single larger message is taken when none waits).
        public var maximumQueuedBytes = 64 << 20
        /// The most calls waiting for answers at once; more are refused.
        public var maximumPendingCalls = 4096
        /// The most calls to exported objects being handled at once; more are answered with
        /// `org.freedesktop.DBus.Error.LimitsExceeded`.
        public var maximumConcurrentIncomingCalls = 64
        /// The most signals a stream keeps for a consumer that does not take them; beyond, the
        /// oldest are dropped (counted, and logged once per stream).
        public var signalBufferLimit = 1024
        /// The clock of call timeouts (a `ManualClock`-backed one in tests).
        public var clock: any Clock<Duration> = ContinuousClock()
        /// Where the connection logs (drops, handler failures, protocol violations).
        public var logger = Logger(label: "bluejay.dbus")

        /// The defaults.
        public init() {}
    }

    let core: DBusConnectionCore

    private init(core: DBusConnectionCore) {
        self.core = core
    }

    deinit {
        core.close(.connectionClosed(reason: "the DBusConnection was released"))
    }

    /// Connects to the first of `addresses` that accepts, authenticates with SASL EXTERNAL, and
    /// (on a bus) calls `Hello`.
    public static func connect(to addresses: [DBusAddress], options: Options = Options()) async throws(DBusError) -> DBusConnection {
        let core = try DBusConnectionCore(options: options)
        try await core.open(addresses)
        return DBusConnection(core: core)
    }

    /// Connects to an address string such as `unix:path=/run/dbus/system_bus_socket`.
    public static func connect(to address: String, options: Options = Options()) async throws(DBusError) -> DBusConnection {
        try await connect(to: try DBusAddress.parse(address), options: options)
    }

    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`. BlueZ is there.
    public static func system(options: Options = Options()) async throws(DBusError) -> DBusConnection {
        try await connect(to: try DBusAddress.systemBus(), options: options)
    }

    /// The session bus: `DBUS_SESSION_BUS_ADDRESS`.
    public static func session(options: Options = Options()) async throws(DBusError) -> DBusConnection {
        try await connect(to: try DBusAddress.sessionBus(), options: options)
    }

    /// The options it was opened with.
    public var options: Options { core.options }

    /// The unique name the bus gave this connection (`:1.42`); `nil` on a peer-to-peer connection.
    public var uniqueName: String? { core.uniqueName }

    /// The server's GUID from the handshake.
    public var serverGUID: String { core.serverGUID }

    /// Whether the peer agreed to pass Unix file descriptors.
    public var canPassFileDescriptors: Bool { core.canPassFileDescriptors }

    /// Whether the connection is still open.
    public var isConnected: Bool { core.closeReason == nil }

    /// Why the connection closed (`nil` while open).
    public var closeReason: DBusError? { core.closeReason }

    /// Closes the connection: calls waiting fail with ``DBusError/connectionClosed(reason:)``,
    /// signal streams end, handlers of exported methods are cancelled. Does not wait.
    public func close() {
        core.close(.connectionClosed(reason: "closed by this process"))
    }

    // MARK: - Messages

    /// Sends `message` as it is (a signal, a call that expects no reply) and returns its serial.
    @discardableResult
    public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
        try core.send(message)
    }

    /// Sends a method call and waits for its return, at most `timeout` (default
    /// ``Options/callTimeout``). An error reply throws ``DBusError/errorReply(name:message:)``;
    /// cancelling the task throws ``DBusError/cancelled``.
    public func call(_ message: DBusMessage, timeout: Duration? = nil) async throws(DBusError) -> DBusMessage {
        try await core.call(message, timeout: timeout ?? core.options.callTimeout)
    }

    /// Calls `member` and returns the reply's arguments.
    @discardableResult
    public func call(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, arguments: [DBusValue] = [],
        timeout: Duration? = nil, flags: DBusMessage.Flags = []
    ) async throws(DBusError) -> [DBusValue] {
        let message = DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member, body: arguments, flags: flags)
        return try await call(message, timeout: timeout).body
    }

    /// Emits a signal from `path`.
    public func emitSignal(
        path: DBusObjectPath, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) {
        try send(.signal(path: path, interface: interface, member: member, body: arguments, destination: destination))
    }

    /// A remote object: `connection.object("org.bluez", at: adapterPath)`.
    public func object(_ destination: String, at path: DBusObjectPath) -> DBusRemoteObject {
        DBusRemoteObject(connection: self, destination: destination, path: path)
    }
}

extension DBusObjectPath {
    /// `/org/freedesktop/DBus`, the bus's object.
    public static let bus = DBusObjectPath(uncheckedKnownValid: "/org/freedesktop/DBus")
}
#endif
