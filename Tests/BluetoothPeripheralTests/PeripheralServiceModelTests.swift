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
}
