@testable import Bluejay
import BluetoothHost
import BluetoothSimulator
import Foundation
import GATTProfiles
import Testing

/// BlueCap's discovery with profiles: what is found is named from a `ProfileRegistry`, else
/// by the Bluetooth SIG names.
@Suite("Discovery named from the profile registry", .timeLimit(.minutes(1)))
struct DiscoveryNamingTests {
    @Test("discoverServices names services and characteristics from the registry; an app's profile names its own UUIDs")
    func namedDiscovery() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)
            let services = try await bluejay.discoverServices()
            let heartRate = try #require(services.first { $0.identifier == ServiceIdentifier(uuid: "180D") })
            #expect(heartRate.name == "Heart Rate")
            #expect(heartRate.characteristics.map(\.name) == ["Heart Rate Measurement", "Body Sensor Location", "Heart Rate Control Point"])
            let measurement = try #require(heartRate.characteristics.first)
            #expect(measurement.properties.contains(.notify))
            #expect(measurement.descriptors.map(\.name).contains("Client Characteristic Configuration"))
            try await bluejay.disconnect()

            // A custom service: unnamed until the app's registry knows it.
            let device = try await simulator.add(SimulatedPeripheral(name: "Thermo", services: [
                SimulatedService(uuid: "FFE0", characteristics: [SimulatedCharacteristic(uuid: "FFE1", properties: [.read], value: [21])]),
            ]))
            try await connect(bluejay, to: device)
            let unnamed = try await bluejay.discoverServices()
            #expect(unnamed.first { $0.identifier == ServiceIdentifier(uuid: "FFE0") }?.name == nil)
            var registry = ProfileRegistry.standard
            registry.register(ServiceProfile(uuid: "FFE0", name: "Thermometer", characteristics: [
                CharacteristicProfile(uuid: "FFE1", name: "Temperature"),
            ]))
            let named = AwaitableLog<ReadResult<[DiscoveredService]>>()
            bluejay.discoverServices(naming: registry, timeout: .seconds(5)) { named.append($0) }
            let result = try #require(await named.wait(forCount: 1)?.first).get()
            let thermometer = try #require(result.first { $0.identifier == ServiceIdentifier(uuid: "FFE0") })
            #expect(thermometer.name == "Thermometer")
            #expect(thermometer.characteristics.first?.name == "Temperature")
            #expect(thermometer.characteristics.first?.identifier == CharacteristicIdentifier(uuid: "FFE1", service: ServiceIdentifier(uuid: "FFE0")))
            #expect("\(thermometer)" == "FFE0 (Thermometer)")
            try await bluejay.disconnect()
        }
    }

    @Test("The registry's names come first, the SIG's after")
    func registryNames() {
        var registry = ProfileRegistry.standard
        #expect(registry.name(forCharacteristic: "2A37") == "Heart Rate Measurement")
        #expect(registry.name(forService: "1811") == GATTNames.name(forService: "1811"), "not in the registry: the SIG name")
        registry.register(ServiceProfile(uuid: "180D", name: "Chest strap", characteristics: [CharacteristicProfile(uuid: "2A38", name: "Strap position")]))
        #expect(registry.name(forService: "180D") == "Chest strap")
        #expect(registry.name(forCharacteristic: "2A38", inService: "180D") == "Strap position")
        #expect(registry.name(forCharacteristic: "2A37", inService: "180D") == "Heart Rate Measurement", "not in the service's profile: the SIG name")
        #expect(ProfileRegistry().name(forService: "ABCD") == nil)
    }
}
