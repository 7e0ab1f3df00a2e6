import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import Testing

/// Peripheral services and characteristics as builders over the GATT server's definitions.
@Suite("Peripheral service model")
struct PeripheralServiceModelTests {
    @Test("Fields read and write the definition; names and profiles stay with their characteristics")
    func forwarding() {
        var service = PeripheralService(profile: BatteryProfile.service)
        service.characteristics[0].value = [42]
        service.characteristics[0].userDescription = "Level"
        #expect(service.definition.uuid == BatteryProfile.service.uuid)
        #expect(service.definition.characteristics.first?.value == [42])
        #expect(service.definition.characteristics.first?.userDescription == "Level")
        #expect(service.characteristics.first?.profile?.uuid == BatteryProfile.service.characteristics.first?.uuid)
        #expect(service.characteristics.first?.name != nil)
    }

    @Test("A definition becomes a service as is, and permissions nil derive from properties")
    func fromDefinition() {
        let definition = GATTServiceDefinition(uuid: "FFF0", characteristics: [
            GATTCharacteristicDefinition(uuid: "FFF1", properties: [.read, .writeWithoutResponse], value: [1]),
        ])
        let service = PeripheralService(definition: definition)
        let characteristic = service.characteristics.first
        #expect(characteristic?.permissions == .readWrite && characteristic?.value == [1] && characteristic?.name == nil)
        #expect(characteristic?.definition.isReadable == true && characteristic?.definition.isWritable == true)
        #expect(PeripheralCharacteristic(uuid: "FFF2", properties: [.notify]).definition.isReadable == false)
    }

    @Test("Read and write security become the definition's permissions and key size, and read back the same")
    func security() {
        var characteristic = PeripheralCharacteristic(uuid: "FFF1", properties: [.read, .write], readSecurity: .encryption,
                                                      writeSecurity: [.authentication, .authorization, .key128])
        #expect(characteristic.permissions == [.readable, .writeable, .readEncryptionRequired, .writeEncryptionRequired,
                                               .writeAuthenticationRequired, .writeAuthorizationRequired])
        #expect(characteristic.minimumKeySize == 16)
        // Reads need encryption, so the 128-bit key counts for them too.
        #expect(characteristic.readSecurity == [.encryption, .key128])
        #expect(characteristic.writeSecurity == [.encryption, .authentication, .authorization, .key128])

        characteristic.writeSecurity = []
        #expect(characteristic.permissions == [.readable, .writeable, .readEncryptionRequired])
        #expect(characteristic.minimumKeySize == 16, "reads still ask for the 128-bit key")
        #expect(characteristic.readSecurity == [.encryption, .key128] && characteristic.writeSecurity.isEmpty)
        characteristic.readSecurity = .encryption
        #expect(characteristic.minimumKeySize == 7, "no direction asks for a 128-bit key any more")
        #expect(characteristic.readSecurity == .encryption)

        // The old spelling still works.
        let legacy = PeripheralCharacteristic(uuid: "FFF2", properties: .read, permissions: [.readable, .readEncryptionRequired])
        #expect(legacy.readSecurity == .encryption && legacy.minimumKeySize == 7)
    }

    @Test("Security level 4 is encryption, authentication and a 128-bit key from LE Secure Connections, for the server to check")
    func levelFour() {
        var characteristic = PeripheralCharacteristic(uuid: "FFF1", properties: [.read, .write], readSecurity: .secureConnections)
        #expect(characteristic.permissions == [.readable, .writeable, .readEncryptionRequired, .readAuthenticationRequired])
        #expect(characteristic.minimumKeySize == 16 && characteristic.requiresSecureConnections && characteristic.definition.requiresSecureConnections)
        #expect(characteristic.readSecurity == [.encryption, .authentication, .key128, .secureConnections])
        #expect(characteristic.writeSecurity.isEmpty, "writes need nothing, so level 4 does not apply to them")

        characteristic.readSecurity = .encryption
        #expect(!characteristic.requiresSecureConnections && characteristic.minimumKeySize == 7)
        #expect(characteristic.readSecurity == .encryption)
    }
}
