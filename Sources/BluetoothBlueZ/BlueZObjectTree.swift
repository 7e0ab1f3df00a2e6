import BluetoothCore
import DBus

/// BlueZ's objects as `GetManagedObjects` gave them and the signals since changed them:
/// adapters, devices and the GATT objects of connected devices, each with its interfaces'
/// properties. A value with no I/O: ``BlueZCentral`` keeps one and feeds it the signals.
struct BlueZObjectTree: Sendable, Equatable {
    typealias Interfaces = [String: [String: DBusValue]]
    private(set) var objects: [DBusObjectPath: Interfaces] = [:]

    init(_ objects: [DBusObjectPath: Interfaces] = [:]) {
        self.objects = objects.mapValues { $0.mapValues { $0.mapValues(\.unwrapped) } }
    }

    mutating func add(_ path: DBusObjectPath, interfaces: Interfaces) {
        for (interface, properties) in interfaces {
            objects[path, default: [:]][interface] = properties.mapValues(\.unwrapped)
        }
    }

    /// Adds the interfaces of `path` the tree does not have; those it has stay as they are.
    /// Returns the names of those it added.
    @discardableResult
    mutating func addMissing(_ path: DBusObjectPath, interfaces: Interfaces) -> [String] {
        var added: [String] = []
        for (interface, properties) in interfaces where objects[path]?[interface] == nil {
            objects[path, default: [:]][interface] = properties.mapValues(\.unwrapped)
            added.append(interface)
        }
        return added
    }

    mutating func remove(_ path: DBusObjectPath, interfaces: [String]) {
        for interface in interfaces { objects[path]?[interface] = nil }
        if objects[path]?.isEmpty == true { objects[path] = nil }
    }

    /// Applies PropertiesChanged; an object not known yet is not made up from a change.
    mutating func change(_ path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String]) {
        guard objects[path]?[interface] != nil else { return }
        for (name, value) in changed { objects[path]?[interface]?[name] = value.unwrapped }
        for name in invalidated { objects[path]?[interface]?[name] = nil }
    }

    /// The properties of `interface` at `path`.
    func properties(_ path: DBusObjectPath, _ interface: String) -> [String: DBusValue]? {
        objects[path]?[interface]
    }

    /// The adapters, by path, in order.
    var adapters: [(path: DBusObjectPath, properties: [String: DBusValue])] {
        objects.compactMap { path, interfaces in interfaces[BlueZ.adapter].map { (path, $0) } }.sorted { $0.path < $1.path }
    }

    /// The adapter named `name` (`hci0`), or the first one when `nil` (BlueZ's default adapter).
    func adapter(named name: String?) -> DBusObjectPath? {
        let all = adapters
        guard let name else { return all.first?.path }
        return all.first { $0.path.elements.last.map(String.init) == name }?.path
    }

    /// The device with `address` under `adapter`.
    func device(_ address: BluetoothAddress, on adapter: DBusObjectPath) -> DBusObjectPath? {
        let text = address.description
        return objects.first { path, interfaces in
            path.parent == adapter && interfaces[BlueZ.device]?["Address"]?.stringValue?.uppercased() == text
        }?.key
    }

    /// The device's address as BlueZ gives it (`Address`, `AddressType`).
    static func address(of device: [String: DBusValue]) -> DeviceAddress? {
        guard let text = device["Address"]?.stringValue, let address = BluetoothAddress(text) else { return nil }
        return DeviceAddress(address, type: device["AddressType"]?.stringValue == "random" ? .random : .public)
    }

    /// The GATT objects below `device`: `(path, interface, properties)` sorted by path.
    func gattObjects(of device: DBusObjectPath) -> [(path: DBusObjectPath, interface: String, properties: [String: DBusValue])] {
        var found: [(DBusObjectPath, String, [String: DBusValue])] = []
        for (path, interfaces) in objects where path != device && path.isWithin(device) {
            for interface in BlueZ.gattInterfaces {
                if let properties = interfaces[interface] { found.append((path, interface, properties)) }
            }
        }
        return found.sorted { $0.0 < $1.0 }
    }
}
