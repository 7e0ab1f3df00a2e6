#if canImport(Glibc)
/// The bus's own methods (org.freedesktop.DBus), the standard Properties and ObjectManager
/// interfaces of remote objects.
extension DBusConnection {
    /// Flags of ``requestName(_:flags:)`` (D-Bus Specification, "org.freedesktop.DBus.RequestName").
    public struct NameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Let a later request with ``replaceExisting`` take the name.
        public static let allowReplacement = NameFlags(rawValue: 0x1)
        /// Take the name from its owner if it allows replacement.
        public static let replaceExisting = NameFlags(rawValue: 0x2)
        /// Fail rather than wait in the queue.
        public static let doNotQueue = NameFlags(rawValue: 0x4)
    }

    /// What ``requestName(_:flags:)`` got.
    public enum NameRequestResult: UInt32, Sendable {
        case primaryOwner = 1
        case inQueue = 2
        case exists = 3
        case alreadyOwner = 4
    }

    /// Asks the bus for a well-known name. A policy refusal is
    /// ``DBusError/errorReply(name:message:)`` with ``DBusErrorName/accessDenied``.
    @discardableResult
    public func requestName(_ name: String, flags: NameFlags = .doNotQueue) async throws(DBusError) -> NameRequestResult {
        let reply = try await core.busCall("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.uint32Value, let result = NameRequestResult(rawValue: code) else {
            throw .unexpectedReply("RequestName answered \(reply)")
        }
        return result
    }

    /// Gives a well-known name back; true if this connection owned it.
    @discardableResult
    public func releaseName(_ name: String) async throws(DBusError) -> Bool {
        let reply = try await core.busCall("ReleaseName", [.string(name)])
        return reply.first?.uint32Value == 1
    }

    /// The unique name of `name`'s owner, or `nil` when nobody owns it.
    public func nameOwner(_ name: String) async throws(DBusError) -> String? {
        do throws(DBusError) {
            let reply = try await core.busCall("GetNameOwner", [.string(name)])
            guard let owner = reply.first?.stringValue else { throw .unexpectedReply("GetNameOwner answered \(reply)") }
            return owner
        } catch {
            if case .errorReply(name: .nameHasNoOwner, _) = error { return nil }
            throw error
        }
    }

    /// Every name on the bus, unique and well-known.
    public func listNames() async throws(DBusError) -> [String] {
        let reply = try await core.busCall("ListNames", [])
        guard let names = [String](dbusValue: reply.first ?? .bytes([])) else { throw .unexpectedReply("ListNames answered \(reply)") }
        return names
    }

    // MARK: - Properties and ObjectManager of remote objects

    /// `Properties.Get`: one property's value (unwrapped from its variant).
    public func property(_ name: String, interface: String, of destination: String, at path: DBusObjectPath) async throws(DBusError) -> DBusValue {
        let reply = try await call(destination: destination, path: path, interface: Self.propertiesInterface, member: "Get",
                                   arguments: [.string(interface), .string(name)])
        guard reply.count == 1, case let .variant(value) = reply[0] else {
            throw .unexpectedReply("Properties.Get of \(interface).\(name) answered \(reply.map(\.type.description).joined())")
        }
        return value
    }

    /// `Properties.GetAll`: every readable property of `interface`.
    public func properties(interface: String, of destination: String, at path: DBusObjectPath) async throws(DBusError) -> [String: DBusValue] {
        let reply = try await call(destination: destination, path: path, interface: Self.propertiesInterface, member: "GetAll",
                                   arguments: [.string(interface)])
        guard reply.count == 1, let properties = [String: DBusValue](dbusValue: reply[0]) else {
            throw .unexpectedReply("Properties.GetAll of \(interface) answered \(reply.map(\.type.description).joined())")
        }
        return properties
    }

    /// `Properties.Set`.
    public func setProperty(_ name: String, to value: DBusValue, interface: String, of destination: String, at path: DBusObjectPath)
        async throws(DBusError) {
        try await call(destination: destination, path: path, interface: Self.propertiesInterface, member: "Set",
                       arguments: [.string(interface), .string(name), .variant(value)])
    }

    /// `ObjectManager.GetManagedObjects` of the manager at `path`: every object below it, with
    /// its interfaces and their properties.
    public func managedObjects(of destination: String, at path: DBusObjectPath = .root) async throws(DBusError)
        -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let reply = try await call(destination: destination, path: path, interface: Self.objectManagerInterface, member: "GetManagedObjects")
        guard reply.count == 1, let objects = [DBusObjectPath: [String: [String: DBusValue]]](dbusValue: reply[0]) else {
            throw .unexpectedReply("GetManagedObjects answered \(reply.map(\.type.description).joined())")
        }
        return objects
    }

    /// `Introspectable.Introspect`: the object's introspection XML.
    public func introspect(_ destination: String, at path: DBusObjectPath) async throws(DBusError) -> String {
        let reply = try await call(destination: destination, path: path, interface: Self.introspectableInterface, member: "Introspect")
        guard let xml = reply.first?.stringValue else { throw .unexpectedReply("Introspect answered \(reply)") }
        return xml
    }
}

/// An object of another connection: its destination (bus name) and path, with the calls and
/// property helpers bound to them.
///
/// ```swift
/// let adapter = bus.object("org.bluez", at: try DBusObjectPath("/org/bluez/hci0"))
/// try await adapter.call("org.bluez.Adapter1", "StartDiscovery")
/// let powered = try await adapter.property("Powered", interface: "org.bluez.Adapter1").boolValue
/// ```
public struct DBusRemoteObject: Sendable {
    /// The connection the calls go through.
    public let connection: DBusConnection
    /// The bus name of the object's owner (`org.bluez`, or a unique name).
    public let destination: String
    /// The object's path.
    public let path: DBusObjectPath

    /// Calls `interface.member` and returns the answer's arguments.
    @discardableResult
    public func call(_ interface: String, _ member: String, _ arguments: [DBusValue] = [], timeout: Duration? = nil) async throws(DBusError)
        -> [DBusValue] {
        try await connection.call(destination: destination, path: path, interface: interface, member: member, arguments: arguments, timeout: timeout)
    }

    /// `Properties.Get`: the property's value, unwrapped from its variant.
    public func property(_ name: String, interface: String) async throws(DBusError) -> DBusValue {
        try await connection.property(name, interface: interface, of: destination, at: path)
    }

    /// `Properties.GetAll`: every readable property of `interface`.
    public func properties(interface: String) async throws(DBusError) -> [String: DBusValue] {
        try await connection.properties(interface: interface, of: destination, at: path)
    }

    /// `Properties.Set`.
    public func setProperty(_ name: String, to value: DBusValue, interface: String) async throws(DBusError) {
        try await connection.setProperty(name, to: value, interface: interface, of: destination, at: path)
    }

    /// `ObjectManager.GetManagedObjects`, if this object is an object manager.
    public func managedObjects() async throws(DBusError) -> [DBusObjectPath: [String: [String: DBusValue]]] {
        try await connection.managedObjects(of: destination, at: path)
    }

    /// `PropertiesChanged` of this object (for `interface`, or any).
    public func propertiesChanged(interface: String? = nil) async throws(DBusError) -> DBusSignals<DBusPropertiesChanged> {
        try await connection.propertiesChanged(sender: destination, path: path, interface: interface)
    }
}
#endif
