@testable import BluetoothBlueZ
import BluetoothCore
@testable import DBus

/// BlueZ's side of a test without bluetoothd: a central whose object tree has one connected
/// device (and whatever else the test puts there), our link to it, and the signals bluetoothd
/// would send about it.
struct ConnectedDevice {
    let central: BlueZCentral
    let link: BlueZConnection
    let path: DBusObjectPath

    /// `properties`: the device's `Device1` properties besides `Connected` (true). `bus`: where
    /// the central's calls go, if the test answers any. `clock`: the central's.
    init(_ path: DBusObjectPath, peer: DeviceAddress, properties: [String: DBusValue] = [:],
         objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:], bus: DBusConnection? = nil,
         clock: BluetoothClock = .continuous) {
        let central = BlueZCentral(adapter: "hci0", clock: clock)
        let link = BlueZConnection(central: central, path: path, peer: peer)
        var device = properties
        device["Connected"] = .variant(.boolean(true))
        var tree = objects
        tree[path] = [BlueZ.device: device]
        central.state.withLock { state in
            state.bus = bus
            state.adapter = DBusObjectPath(uncheckedPath: "/org/bluez/hci0")
            state.tree = BlueZObjectTree(tree)
            state.connections[path] = link
        }
        link.didConnect()
        (self.central, self.link, self.path) = (central, link, path)
    }

    /// bluetoothd's `PropertiesChanged` for the device's `Device1`.
    func changed(_ changed: [String: DBusValue]) {
        central.handle(.signal(path: path, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                               body: [.string(BlueZ.device), DBusValue(changed), DBusValue([String]())]))
    }
}
