@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

@Suite("A simulated peripheral with extended advertising", .timeLimit(.minutes(1)))
struct ExtendedAdvertisingSimulatorTests {
    @Test("Bluejay discovers a simulated peripheral's 200-octet extended advertisement whole")
    func longAdvertisementThroughBluejay() async throws {
        try await withSimulator { simulator, bluejay in
            let payload = [UInt8](repeating: 0x5A, count: 180)
            let data = AdvertisingData([.flags(.leGeneralDiscoverableMode), .completeLocalName("Long Gadget"),
                                        .serviceUUIDs16([0xFFF0], complete: true),
                                        .manufacturerSpecificData(companyID: 0xFFFF, data: payload)])
            #expect(data.encodedLength > 200)
            var declaration = SimulatedPeripheral(name: "Long Gadget", advertisingInterval: .milliseconds(40), services: [
                SimulatedService(uuid: "FFF0", characteristics: [SimulatedCharacteristic(uuid: "FFF1", properties: [.read], value: [1])]),
            ])
            declaration.advertisingData = data
            declaration.usesExtendedAdvertising = true
            let device = try await simulator.add(declaration)
            #expect(await device.isAdvertising)
            var discovered: ScanDiscovery?
            for try await event in bluejay.scan(serviceIdentifiers: [ServiceIdentifier(uuid: "FFF0")]) {
                discovered = event.discovery
                break
            }
            let discovery = try #require(discovered)
            #expect(discovery.peripheralIdentifier == device.peripheralIdentifier)
            #expect(discovery.isExtended)
            #expect(!discovery.isDataTruncated && !discovery.isDataPartial)
            #expect(discovery.manufacturerData == Data([0xFF, 0xFF] + payload))
            #expect(discovery.advertisementPacket == data)
            try await device.stopAdvertising()
            #expect(await !device.isAdvertising)
        }
    }
}
