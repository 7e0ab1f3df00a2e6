import BluetoothCore
import GATTProfiles
import Testing

@Suite("GATT names", .timeLimit(.minutes(1)))
struct GATTNamesTests {
    @Test("Well-known services, characteristics and descriptors have their SIG names")
    func sigNames() {
        #expect(GATTNames.name(forService: BluetoothUUID(UInt16(0x180D))) == "Heart Rate")
        #expect(GATTNames.name(forService: BluetoothUUID("0000180F-0000-1000-8000-00805F9B34FB")) == "Battery")
        #expect(GATTNames.name(forService: BluetoothUUID(UInt16(0x1800))) == "Generic Access")
        #expect(GATTNames.name(forCharacteristic: BluetoothUUID(UInt16(0x2A37))) == "Heart Rate Measurement")
        #expect(GATTNames.name(forCharacteristic: BluetoothUUID(UInt16(0x2A05))) == "Service Changed")
        #expect(GATTNames.name(forDescriptor: BluetoothUUID(UInt16(0x2902))) == "Client Characteristic Configuration")
        #expect(GATTNames.name(forAttributeType: BluetoothUUID(UInt16(0x2803))) == "Characteristic")
    }

    @Test("Vendor services of the shipped profiles are named; unknown UUIDs are not")
    func vendorAndUnknown() {
        #expect(GATTNames.name(forService: BluetoothUUID("F000AA10-0451-4000-B000-000000000000")) == "TI Accelerometer")
        #expect(GATTNames.name(forCharacteristic: BluetoothUUID("F000AA11-0451-4000-B000-000000000000")) == "Accelerometer Data")
        #expect(GATTNames.name(forService: BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")) == "Nordic UART Service")
        #expect(GATTNames.name(forService: BluetoothUUID(UInt16(0xFFF0))) == nil)
        #expect(GATTNames.name(forCharacteristic: BluetoothUUID(UInt16(0x180D))) == nil)
        #expect(GATTNames.name(forDescriptor: BluetoothUUID(UInt16(0x2A37))) == nil)
    }
}
