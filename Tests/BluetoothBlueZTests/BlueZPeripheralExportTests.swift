@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
import DBus
import Testing

/// What the peripheral role on BlueZ exports: the advertisement's properties and the GATT
/// application's flags, read as bluetoothd reads them.
@Suite("BlueZ peripheral: the exported advertisement and GATT application")
struct BlueZPeripheralExportTests {
    @Test("A connectable advertisement: name, service UUIDs, manufacturer data as a{qv}, Discoverable; intervals in milliseconds")
    func connectableAdvertisement() throws {
        let data = AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .serviceUUIDs16([0x180D], complete: true),
                                    .manufacturerSpecificData(companyID: 0x0059, data: [0xC0, 0xFF, 0xEE])])
        let properties = try BlueZLEAdvertisement.properties(data, scanResponse: AdvertisingData([.completeLocalName("Sensor")]),
                                                             parameters: AdvertisingParameters(intervalRange: 0x00A0...0x0140))
        #expect(properties["Type"] == .string("peripheral"))
        #expect(properties["Discoverable"] == .boolean(true))
        #expect(properties["LocalName"] == .string("Sensor"), "the scan response's fields go to BlueZ with the rest")
        #expect(properties["ServiceUUIDs"] == .array(of: .string, [.string("0000180d-0000-1000-8000-00805f9b34fb")]))
        #expect(properties["ManufacturerData"]?.type == .array(.dictEntry(key: .uint16, value: .variant)))
        #expect(properties["ManufacturerData"] == DBusValue([UInt16(0x0059): DBusValue.bytes([0xC0, 0xFF, 0xEE])]))
        #expect(properties["MinInterval"] == .uint32(100) && properties["MaxInterval"] == .uint32(200))
    }

    @Test("A broadcast advertisement carries no Discoverable (BlueZ refuses it there: Failed to parse advertisement)")
    func broadcastAdvertisement() throws {
        let properties = try BlueZLEAdvertisement.properties(
            AdvertisingData([.flags(.leGeneralDiscoverableMode), .completeLocalName("Beacon")]), scanResponse: nil,
            parameters: AdvertisingParameters(isConnectable: false, isScannable: false))
        #expect(properties["Type"] == .string("broadcast"))
        #expect(properties["Discoverable"] == nil)
    }

    @Test("A field LEAdvertisement1 cannot carry is unsupported, with the reason, never dropped")
    func unsupportedField() {
        #expect {
            _ = try BlueZLEAdvertisement.properties(AdvertisingData([.uri("https://example.com")]), scanResponse: nil,
                                                    parameters: AdvertisingParameters())
        } throws: { error in
            guard case let .unsupported(reason)? = error as? HostError else { return false }
            return reason.contains("LEAdvertisement1")
        }
    }

    @Test("Flags: properties, and each access's link requirement (read's for notify and indicate)")
    func characteristicFlags() {
        let open = GATTAccessPolicy.Requirement(encryption: false, authentication: false, secureConnections: false, authorization: false,
                                                minimumKeySize: 7)
        var encrypted = open
        encrypted.encryption = true
        var authenticated = encrypted
        authenticated.authentication = true
        var secure = authenticated
        secure.secureConnections = true
        let policy = GATTAccessPolicy(isReadable: true, isWritable: true, read: authenticated, write: secure, maximumLength: 512)
        let flags = BlueZGATTApplication.characteristicFlags([.read, .write, .notify, .indicate], policy)
        #expect(flags == ["read", "write", "notify", "indicate", "encrypt-authenticated-read", "secure-write",
                          "encrypt-authenticated-notify", "encrypt-authenticated-indicate"])
        let plain = GATTAccessPolicy(isReadable: true, isWritable: false, read: encrypted, write: open, maximumLength: 512)
        #expect(BlueZGATTApplication.characteristicFlags([.read], plain) == ["read", "encrypt-read"])
        #expect(BlueZGATTApplication.descriptorFlags(plain) == ["read", "encrypt-read"])
    }

    @Test("The application: one object per service, characteristic and descriptor; BlueZ's own CCCD is not exported")
    func application() {
        let service = GATTPublishedService(uuid: BluetoothUUID(UInt16(0x180D)), isPrimary: true, handleRange: 10...16, characteristics: [
            GATTPublishedCharacteristic(uuid: BluetoothUUID(UInt16(0x2A37)), properties: [.notify], declarationHandle: 11, valueHandle: 12,
                                        clientConfigurationHandle: 13,
                                        descriptors: [GATTDescriptor(uuid: BluetoothUUID(UInt16(0x2902)), handle: 13),
                                                      GATTDescriptor(uuid: BluetoothUUID(UInt16(0x2901)), handle: 14)]),
        ])
        let application = BlueZGATTApplication(services: [service], policy: { _ in nil })
        #expect(application.objects.map(\.interface) == [BlueZ.gattService, BlueZ.gattCharacteristic, BlueZ.gattDescriptor])
        #expect(application.objects.map(\.path.description) == ["/org/bluejay/app/service0", "/org/bluejay/app/service0/char0",
                                                                 "/org/bluejay/app/service0/char0/desc0"])
        #expect(application.objects.last?.handle == 14, "the user description, not the CCCD")
        #expect(application.characteristicPaths[12]?.description == "/org/bluejay/app/service0/char0")
    }

    @Test("What BlueZ could not keep is refused: authorization on a notified value, a key size between 7 and 16 octets")
    func notExportable() throws {
        let characteristic = GATTPublishedCharacteristic(uuid: BluetoothUUID(UInt16(0x2A37)), properties: [.read, .notify], declarationHandle: 11,
                                                         valueHandle: 12, clientConfigurationHandle: 13, descriptors: [])
        let service = GATTPublishedService(uuid: BluetoothUUID(UInt16(0x180D)), isPrimary: true, handleRange: 10...13,
                                           characteristics: [characteristic])
        func policy(read: GATTAccessPolicy.Requirement) -> [UInt16: GATTAccessPolicy] {
            [12: GATTAccessPolicy(isReadable: true, isWritable: false, read: read, write: read, maximumLength: 512)]
        }
        let open = GATTAccessPolicy.Requirement(encryption: false, authentication: false, secureConnections: false, authorization: false,
                                                minimumKeySize: 7)
        try BlueZPeripheral.checkExportable([service], policies: policy(read: open))
        var authorized = open
        authorized.authorization = true
        #expect(throws: HostError.self) { try BlueZPeripheral.checkExportable([service], policies: policy(read: authorized)) }
        var longKey = open
        longKey.encryption = true
        longKey.minimumKeySize = 12
        #expect(throws: HostError.self) { try BlueZPeripheral.checkExportable([service], policies: policy(read: longKey)) }
        longKey.secureConnections = true
        try BlueZPeripheral.checkExportable([service], policies: policy(read: longKey))
    }

    @Test("ATT errors become the org.bluez.Error names bluetoothd turns back into them")
    func errors() {
        func name(_ code: ATTErrorCode) -> String? {
            guard case let .errorReply(name, _) = BlueZGATTApplication.error(code, "test") else { return nil }
            return name.rawValue
        }
        #expect(name(.insufficientAuthorization) == "org.bluez.Error.NotAuthorized")
        #expect(name(.invalidAttributeValueLength) == "org.bluez.Error.InvalidValueLength")
        #expect(name(.invalidOffset) == "org.bluez.Error.InvalidOffset")
        #expect(name(.writeNotPermitted) == "org.bluez.Error.NotPermitted")
        #expect(name(.unlikelyError) == "org.bluez.Error.Failed")
    }
}
