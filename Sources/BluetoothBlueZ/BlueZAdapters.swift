import BluetoothCore
import DBus

/// An adapter bluetoothd keeps (`org.bluez.Adapter1`), as `bluejay adapters` shows it.
public struct BlueZAdapterInfo: Sendable, Equatable {
    /// BlueZ's name for it: `hci0`.
    public var name: String
    public var address: BluetoothAddress?
    /// Whether BlueZ has it powered on.
    public var isPowered: Bool
    /// Whether BlueZ is discovering on it now.
    public var isDiscovering: Bool
    /// Its alias (the name it shows to peers).
    public var alias: String?

    public init(name: String, address: BluetoothAddress?, isPowered: Bool, isDiscovering: Bool, alias: String?) {
        self.name = name
        self.address = address
        self.isPowered = isPowered
        self.isDiscovering = isDiscovering
        self.alias = alias
    }
}

extension BlueZCentral {
    /// The adapters BlueZ keeps, from its objects on the system bus; a ``BlueZError`` says why
    /// they cannot be read (no system bus, no bluetoothd, a policy that refuses).
    public static func adapters() async throws(BlueZError) -> [BlueZAdapterInfo] {
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.system()
        } catch {
            throw .busUnavailable("\(error)")
        }
        defer { bus.close() }
        do {
            let objects = try await bus.managedObjects(of: BlueZ.service)
            return BlueZObjectTree(objects).adapters.map { path, properties in
                BlueZAdapterInfo(name: path.elements.last.map(String.init) ?? path.description,
                                 address: properties["Address"]?.stringValue.flatMap(BluetoothAddress.init),
                                 isPowered: properties["Powered"]?.boolValue ?? false,
                                 isDiscovering: properties["Discovering"]?.boolValue ?? false,
                                 alias: properties["Alias"]?.stringValue)
            }
        } catch {
            switch BlueZError.from(error, operation: "listing BlueZ's adapters") {
            case let error as BlueZError: throw error
            default: throw .daemonUnavailable("\(error)")
            }
        }
    }
}
