#if canImport(Glibc)
/// Signals: streams with match rules, and the standard signals decoded.
extension DBusConnection {
    /// The signals that match `rule`, from now on. Returns once the rule is on the bus (so a
    /// signal emitted after this returns is seen); the rule is removed when the consumer stops.
    ///
    /// ```swift
    /// let stream = try await bus.signals(matching: DBusMatchRule(sender: "org.bluez", member: "InterfacesAdded"))
    /// for try await signal in stream { … }
    /// ```
    public func signals(matching rule: DBusMatchRule, bufferLimit: Int? = nil) async throws(DBusError) -> DBusSignalStream {
        try await core.subscribe(rule, bufferLimit: bufferLimit ?? core.options.signalBufferLimit)
    }

    /// `InterfacesAdded` from the object manager at `manager` (any, if `nil`) owned by `sender`.
    public func interfacesAdded(sender: String?, manager: DBusObjectPath? = nil) async throws(DBusError) -> DBusSignals<DBusInterfacesAdded> {
        let rule = DBusMatchRule(sender: sender, interface: Self.objectManagerInterface, member: "InterfacesAdded", path: manager)
        return DBusSignals(try await signals(matching: rule), decode: DBusInterfacesAdded.init)
    }

    /// `InterfacesRemoved` from the object manager at `manager` (any, if `nil`) owned by `sender`.
    public func interfacesRemoved(sender: String?, manager: DBusObjectPath? = nil) async throws(DBusError) -> DBusSignals<DBusInterfacesRemoved> {
        let rule = DBusMatchRule(sender: sender, interface: Self.objectManagerInterface, member: "InterfacesRemoved", path: manager)
        return DBusSignals(try await signals(matching: rule), decode: DBusInterfacesRemoved.init)
    }

    /// `PropertiesChanged` of the objects at `path`, or under `pathNamespace`, for `interface`
    /// (any, if `nil`), sent by `sender`.
    public func propertiesChanged(
        sender: String?, path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, interface: String? = nil
    ) async throws(DBusError) -> DBusSignals<DBusPropertiesChanged> {
        let rule = DBusMatchRule(
            sender: sender, interface: Self.propertiesInterface, member: "PropertiesChanged", path: path, pathNamespace: pathNamespace,
            arguments: interface.map { [0: $0] } ?? [:]
        )
        return DBusSignals(try await signals(matching: rule), decode: DBusPropertiesChanged.init)
    }

    /// `NameOwnerChanged` for `name`: (old owner, new owner), empty strings for none; the way to
    /// see a service (bluetoothd) leave and come back.
    public func nameOwnerChanges(_ name: String) async throws(DBusError) -> DBusSignals<(name: String, oldOwner: String, newOwner: String)> {
        let rule = DBusMatchRule(sender: Self.busName, interface: Self.busName, member: "NameOwnerChanged", path: .bus, arguments: [0: name])
        return DBusSignals(try await signals(matching: rule)) { message in
            guard let (name, old, new) = try? message.decode(String.self, String.self, String.self) else { return nil }
            return (name, old, new)
        }
    }

    /// `org.freedesktop.DBus.Properties`: Get, GetAll, Set and PropertiesChanged.
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    /// `org.freedesktop.DBus.ObjectManager`: GetManagedObjects, InterfacesAdded, InterfacesRemoved.
    public static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    /// `org.freedesktop.DBus.Introspectable`: Introspect.
    public static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    /// `org.freedesktop.DBus.Peer`: Ping and GetMachineId, answered on every path.
    public static let peerInterface = "org.freedesktop.DBus.Peer"
}
#endif
