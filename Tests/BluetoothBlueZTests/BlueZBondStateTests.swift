@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
@testable import DBus
import Testing

/// A device our agent authenticated stops counting as authenticated once BlueZ no longer has
/// its bond, however it went (bluetoothctl remove, bluetoothd dropping it).
@Suite("BlueZ: what BlueZ's bond changes do to our authenticated mark")
struct BlueZBondStateTests {
    static let device = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_05")
    static let address = BluetoothAddress(rawValue: 0xC0_0000_0000_05)

    private func central() -> BlueZCentral {
        let central = BlueZCentral(adapter: "hci0")
        central.state.withLock { state in
            state.adapter = DBusObjectPath(uncheckedPath: "/org/bluez/hci0")
            state.tree = BlueZObjectTree([Self.device: [BlueZ.device: [
                "Address": .variant(.string("C0:00:00:00:00:05")), "AddressType": .variant(.string("random")),
                "Paired": .variant(.boolean(true)),
            ]]])
            state.authenticatedPeers = [Self.address]
        }
        return central
    }

    @Test("Paired turning false clears the mark; another property changing does not")
    func unpaired() {
        let central = central()
        central.handle(.signal(path: Self.device, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                               body: [.string(BlueZ.device), DBusValue(["RSSI": DBusValue.int16(-40)]), DBusValue([String]())]))
        #expect(central.pairedWithAuthentication(Self.address))
        central.handle(.signal(path: Self.device, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                               body: [.string(BlueZ.device), DBusValue(["Paired": DBusValue.boolean(false)]), DBusValue([String]())]))
        #expect(!central.pairedWithAuthentication(Self.address))
    }

    @Test("The device object removed clears the mark")
    func removed() {
        let central = central()
        central.handle(.signal(path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesRemoved",
                               body: [.objectPath(Self.device), DBusValue([BlueZ.device])]))
        #expect(!central.pairedWithAuthentication(Self.address))
    }
}
