@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
import DBus
import Testing

/// Device1 properties, as BlueZ 5.66 sends them (variants in a{sv}), made into our Advertisement.
@Suite("BlueZ: Device1 properties to an Advertisement")
struct BlueZAdvertisementTests {
    static func device(_ properties: [String: DBusValue]) -> [String: DBusValue] {
        BlueZObjectTree([BlueZTestPaths.device: [BlueZ.device: properties.mapValues { DBusValue.variant($0) }]])
            .properties(BlueZTestPaths.device, BlueZ.device) ?? [:]
    }

    @Test("Every advertised field: flags, name, UUIDs, manufacturer and service data, TX power, appearance, RSSI, other AD types")
    func everyField() throws {
        let manufacturer = DBusValue.dictionary(DBusDictionary(keyType: .uint16, valueType: .variant, entries: [
            .init(key: .uint16(0x004C), value: .variant(.bytes([0x02, 0x15, 0xAA]))),
            .init(key: .uint16(0x0059), value: .variant(.bytes([0x01]))),
        ]))
        let serviceData = DBusValue.dictionary(DBusDictionary(keyType: .string, valueType: .variant, entries: [
            .init(key: .string("0000180f-0000-1000-8000-00805f9b34fb"), value: .variant(.bytes([0x64]))),
        ]))
        let raw = DBusValue.dictionary(DBusDictionary(keyType: .byte, valueType: .variant, entries: [
            .init(key: .byte(0x24), value: .variant(.bytes([0x01, 0x02]))),
        ]))
        let properties = Self.device([
            "Address": "F0:00:00:00:00:01", "AddressType": "random", "Name": "Bluejay Peer",
            "RSSI": .int16(-57), "TxPower": .int16(4), "Appearance": .uint16(0x0341),
            "AdvertisingFlags": .bytes([0x06]),
            "UUIDs": .array(of: .string, [.string("0000180d-0000-1000-8000-00805f9b34fb"), .string("6e400001-b5a3-f393-e0a9-e50e24dcca9e")]),
            "ManufacturerData": manufacturer, "ServiceData": serviceData, "AdvertisingData": raw,
        ])
        let advertisement = try #require(BlueZAdvertisement.advertisement(from: properties))
        #expect(advertisement.peer == DeviceAddress(try #require(BluetoothAddress("F0:00:00:00:00:01")), type: .random))
        #expect(advertisement.rssi == -57)
        #expect(advertisement.localName == "Bluejay Peer")
        #expect(advertisement.serviceUUIDs == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(stringLiteral: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")])
        #expect(advertisement.data.flags == AdvertisingFlags(rawValue: 0x06))
        #expect(advertisement.data.allManufacturerData.map(\.companyID) == [0x004C, 0x0059])
        #expect(advertisement.data.allManufacturerData.first?.data == [0x02, 0x15, 0xAA])
        #expect(advertisement.data.serviceData.map(\.uuid) == [BluetoothUUID(UInt16(0x180F))])
        #expect(advertisement.data.serviceData.first?.data == [0x64])
        #expect(advertisement.txPowerLevel == 4)
        #expect(advertisement.data.appearance == 0x0341)
        #expect(advertisement.advertisingData.structures.contains(AdvertisingStructure(type: AdvertisingDataType(rawValue: 0x24), data: [0x01, 0x02])))
    }

    @Test("A public address; no RSSI (a device BlueZ remembers but does not hear now); no data at all")
    func bareDevice() throws {
        let advertisement = try #require(BlueZAdvertisement.advertisement(from: Self.device(["Address": "C0:FF:EE:00:11:22", "AddressType": "public"])))
        #expect(advertisement.peer.type == .public)
        #expect(advertisement.rssi == nil)
        #expect(advertisement.advertisingData.structures.isEmpty)
    }

    @Test("A device without a readable address is no advertisement; malformed fields are skipped, not trusted")
    func malformed() {
        #expect(BlueZAdvertisement.advertisement(from: Self.device(["Address": "not an address"])) == nil)
        #expect(BlueZAdvertisement.advertisement(from: Self.device(["Name": "no address"])) == nil)
        let odd = BlueZAdvertisement.advertisement(from: Self.device([
            "Address": "F0:00:00:00:00:02", "RSSI": .string("loud"), "UUIDs": .array(of: .string, [.string("not-a-uuid")]),
            "ManufacturerData": .dictionary(DBusDictionary(keyType: .string, valueType: .variant, entries: [.init(key: .string("x"), value: .variant(.bytes([1])))])),
            "TxPower": .int16(300),
        ]))
        #expect(odd?.rssi == nil)
        #expect(odd?.serviceUUIDs.isEmpty == true)
        #expect(odd?.data.allManufacturerData.isEmpty == true)
        #expect(odd?.txPowerLevel == 127, "clamped to what the AD field holds")
    }

    @Test("The discovery filter: LE only, BlueZ's duplicate filter as asked, UUIDs and RSSI")
    func discoveryFilter() throws {
        var options = ScanOptions(active: true, filterDuplicates: false, serviceUUIDs: [BluetoothUUID(UInt16(0x180D))])
        options.minimumRSSI = -70
        let filter = try #require(BlueZCentral.discoveryFilter(options).dictionaryValue)
        #expect(filter["Transport"] == .string("le"))
        #expect(filter["DuplicateData"] == .boolean(true))
        #expect(filter["UUIDs"]?.arrayValue == [.string("0000180d-0000-1000-8000-00805f9b34fb")])
        #expect(filter["RSSI"] == .int16(-70))
        let plain = try #require(BlueZCentral.discoveryFilter(ScanOptions()).dictionaryValue)
        #expect(plain["DuplicateData"] == .boolean(false))
        #expect(plain["UUIDs"] == nil && plain["RSSI"] == nil)
    }
}

enum BlueZTestPaths {
    static let adapter = DBusObjectPath(uncheckedPath: "/org/bluez/hci0")
    static let device = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_F0_00_00_00_00_01")
}
