@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
import DBus
import Testing

/// BlueZ's GATT objects of a connected device, as GetManagedObjects gives them, made into our
/// GATT values with their handles.
@Suite("BlueZ: the GATT object tree to services, characteristics and descriptors")
struct BlueZGATTDatabaseTests {
    static let device = BlueZTestPaths.device

    static func path(_ suffix: String) -> DBusObjectPath { DBusObjectPath(uncheckedPath: "\(device)/\(suffix)") }

    /// Two services: Heart Rate (0x000a-0x0010: 2A37 notify with its CCCD, 2A38 read/write) and
    /// a UART-like one at 0x0020 whose characteristic has a Handle property that says where its
    /// value is.
    static func tree(withHandles: Bool = true) -> BlueZObjectTree {
        func variant(_ properties: [String: DBusValue]) -> [String: DBusValue] { properties.mapValues { .variant($0) } }
        var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [
            device: [BlueZ.device: variant(["Address": "F0:00:00:00:00:01", "AddressType": "random", "Connected": true, "ServicesResolved": true])],
            path("service000a"): [BlueZ.gattService: variant(["UUID": "0000180d-0000-1000-8000-00805f9b34fb", "Primary": true, "Device": .objectPath(device)])],
            path("service000a/char000b"): [BlueZ.gattCharacteristic: variant([
                "UUID": "00002a37-0000-1000-8000-00805f9b34fb", "Service": .objectPath(path("service000a")),
                "Flags": .array(of: .string, [.string("notify")]), "NotifyAcquired": false, "MTU": .uint16(247)])],
            path("service000a/char000b/desc000d"): [BlueZ.gattDescriptor: variant([
                "UUID": "00002902-0000-1000-8000-00805f9b34fb", "Characteristic": .objectPath(path("service000a/char000b"))])],
            path("service000a/char000e"): [BlueZ.gattCharacteristic: variant([
                "UUID": "00002a38-0000-1000-8000-00805f9b34fb", "Service": .objectPath(path("service000a")),
                "Flags": .array(of: .string, [.string("read"), .string("write"), .string("encrypt-read")])])],
            path("service0020"): [BlueZ.gattService: variant(["UUID": "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "Primary": true])],
            path("service0020/char0021"): [BlueZ.gattCharacteristic: variant([
                "UUID": "6e400002-b5a3-f393-e0a9-e50e24dcca9e", "Service": .objectPath(path("service0020")),
                "Flags": .array(of: .string, [.string("write-without-response"), .string("write")])])],
            // Another device's objects are not this one's.
            DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_F0_00_00_00_00_02/service0001"): [BlueZ.gattService: variant(["UUID": "1800"])],
        ]
        if withHandles {
            objects[path("service0020/char0021")]?[BlueZ.gattCharacteristic]?["Handle"] = .variant(.uint16(0x0023))
            objects[path("service0020")]?[BlueZ.gattService]?["Handle"] = .variant(.uint16(0x0020))
        }
        return BlueZObjectTree(objects)
    }

    @Test("Services, characteristics and descriptors with the handles BlueZ names them by")
    func database() throws {
        let database = BlueZGATTDatabase(tree: Self.tree(), device: Self.device)
        #expect(database.services.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(stringLiteral: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")])
        let heartRate = try #require(database.services.first)
        #expect(heartRate.service.handleRange == 0x000A...0x001F, "it ends where the next begins")
        #expect(heartRate.characteristics.map(\.characteristic) == [
            GATTCharacteristic(uuid: BluetoothUUID(UInt16(0x2A37)), properties: .notify, declarationHandle: 0x000B, valueHandle: 0x000C, endHandle: 0x000D),
            GATTCharacteristic(uuid: BluetoothUUID(UInt16(0x2A38)), properties: [.read, .write], declarationHandle: 0x000E, valueHandle: 0x000F, endHandle: 0x001F),
        ])
        #expect(heartRate.characteristics.first?.descriptors == [GATTDescriptor(uuid: BluetoothUUID(UInt16(0x2902)), handle: 0x000D)])
        #expect(heartRate.characteristics.first?.clientConfigurationHandle == 0x000D)
        let uart = try #require(database.services.last)
        #expect(uart.service.handleRange == 0x0020...0x0023, "the last ends at its last attribute")
        #expect(uart.characteristics.first?.characteristic.valueHandle == 0x0023, "the Handle property decides the value handle")
        #expect(uart.characteristics.first?.characteristic.properties == [.writeWithoutResponse, .write])
        #expect(database.characteristicPaths[0x000C] == Self.path("service000a/char000b"))
        #expect(database.characteristicPaths[0x0023] == Self.path("service0020/char0021"))
        #expect(database.descriptorPaths[0x000D] == Self.path("service000a/char000b/desc000d"))
        #expect(database.blueZFlags[0x000F]?.contains("encrypt-read") == true)
    }

    @Test("Without Handle properties the value follows its declaration")
    func withoutHandles() throws {
        let database = BlueZGATTDatabase(tree: Self.tree(withHandles: false), device: Self.device)
        #expect(database.services.last?.characteristics.first?.characteristic.valueHandle == 0x0022)
    }

    @Test("Object names to handles: service, char and desc with four hex digits; anything else is none")
    func handleNames() {
        #expect(BlueZGATTDatabase.handle(in: Self.path("service001f")) == 0x001F)
        #expect(BlueZGATTDatabase.handle(in: Self.path("service000a/char00ff")) == 0x00FF)
        #expect(BlueZGATTDatabase.handle(in: Self.path("service000a/char00ff/descabcd")) == 0xABCD)
        #expect(BlueZGATTDatabase.handle(in: Self.path("service12345")) == nil)
        #expect(BlueZGATTDatabase.handle(in: Self.path("servicezzzz")) == nil)
        #expect(BlueZGATTDatabase.handle(in: Self.device) == nil)
    }

    @Test("The tree follows InterfacesAdded, PropertiesChanged and InterfacesRemoved; a change to an unknown object makes nothing up")
    func treeUpdates() {
        var tree = Self.tree()
        let characteristic = Self.path("service000a/char000b")
        tree.change(characteristic, interface: BlueZ.gattCharacteristic, changed: ["Value": .variant(.bytes([1, 2]))], invalidated: ["MTU"])
        #expect(tree.properties(characteristic, BlueZ.gattCharacteristic)?["Value"] == .bytes([1, 2]))
        #expect(tree.properties(characteristic, BlueZ.gattCharacteristic)?["MTU"] == nil)
        tree.change(Self.path("nothing"), interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes([1])], invalidated: [])
        #expect(tree.properties(Self.path("nothing"), BlueZ.gattCharacteristic) == nil)
        tree.remove(Self.path("service0020/char0021"), interfaces: [BlueZ.gattCharacteristic])
        #expect(BlueZGATTDatabase(tree: tree, device: Self.device).services.last?.characteristics.isEmpty == true)
        #expect(tree.device(BluetoothAddress("F0:00:00:00:00:01")!, on: BlueZTestPaths.adapter) == Self.device)
        #expect(tree.device(BluetoothAddress("F0:00:00:00:00:09")!, on: BlueZTestPaths.adapter) == nil)
    }
}
