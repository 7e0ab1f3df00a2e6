#if canImport(Glibc)
/// Exported objects: what other connections call on this one (a BlueZ agent, a GATT
/// application, an LE advertisement).
extension DBusConnection {
    /// Exports an object with `interfaces` at `path`. Its methods are called by other
    /// connections from now on; the connection answers Introspect, Properties.Get/GetAll/Set
    /// and Peer for it. If an object manager is at or above `path`'s parent (see
    /// ``addObjectManager(at:)``), it announces the object with InterfacesAdded.
    public func export(_ interfaces: [DBusInterface], at path: DBusObjectPath) async throws(DBusError) {
        try await core.export(interfaces, at: path)
    }

    /// Withdraws the object at `path` (InterfacesRemoved from its object manager, if any).
    public func unexport(_ path: DBusObjectPath) throws(DBusError) {
        try core.unexport(path)
    }

    /// Makes `path` an object manager: it answers GetManagedObjects with every exported object
    /// below it, and announces objects exported or withdrawn below it. BlueZ's
    /// `GattManager1.RegisterApplication` reads an application's services this way.
    public func addObjectManager(at path: DBusObjectPath) throws(DBusError) {
        try core.addObjectManager(at: path)
    }

    /// Emits `PropertiesChanged` for properties of an exported object (for example a GATT
    /// characteristic's `Value`, which BlueZ turns into a notification).
    public func emitPropertiesChanged(
        path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws(DBusError) {
        try emitSignal(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                       arguments: [.string(interface), DBusValue(changed), DBusValue(invalidated)])
    }
}
#endif
