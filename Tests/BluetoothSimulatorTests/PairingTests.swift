@testable import Bluejay
import BluetoothSimulator
import Testing

/// A simulated peripheral that protects a characteristic: the app's reads pair with it with no
/// hardware, as they would with a locked device.
@Suite("Pairing with simulated peripherals", .timeLimit(.minutes(1)))
struct SimulatorPairingTests {
    private static var lockedSensor: HeartRateSensor.Configuration {
        var configuration = HeartRateSensor.Configuration(measurementInterval: nil)
        configuration.locationSecurity = .encryption
        return configuration
    }

    @Test("A read of a characteristic that needs encryption pairs first, then succeeds")
    func readPairsAutomatically() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(Self.lockedSensor)
            try await connect(bluejay, to: sensor.device)
            #expect(bluejay.linkSecurity?.isEncrypted == false)
            let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
            #expect(location == HeartRateProfile.BodySensorLocation.chest.rawValue)
            #expect(bluejay.linkSecurity?.isEncrypted == true)
            #expect(bluejay.linkSecurity?.isBonded == true)
            #expect(try await bluejay.bonds().count == 1, "Just Works with bonding, by default")
            // A characteristic with no security was always readable.
            let battery: UInt8 = try await bluejay.read(from: CharacteristicIdentifier(uuid: "2A19", service: ServiceIdentifier(uuid: "180F")))
            #expect(battery == 87)
        }
    }

    @Test("With raisesSecurityAutomatically off, the read fails with the server's ATT error")
    func readFailsWithoutAutomaticSecurity() async throws {
        try await withSimulator(configure: { $0.raisesSecurityAutomatically = false }) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(Self.lockedSensor)
            try await connect(bluejay, to: sensor.device)
            do {
                let _: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
                Issue.record("the read succeeded on an unencrypted link")
            } catch {
                guard case let BluejayError.attError(code, _, _) = error else {
                    Issue.record("expected an ATT error, got \(error)")
                    return
                }
                #expect(code == .insufficientAuthentication, "no bond: the server asks for pairing (Core 6.0, Vol 3, Part C, 10.3.1)")
            }
            #expect(bluejay.linkSecurity?.isEncrypted == false)
            #expect(try await bluejay.bonds().isEmpty)
            // Pairing on the app's request then opens it.
            _ = try await bluejay.pair()
            let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
            #expect(location == HeartRateProfile.BodySensorLocation.chest.rawValue)
        }
    }

    @Test("docs/SIMULATOR.md: pairing with the simulator, as printed")
    func readmeSample() async throws {
        try await withSimulator { simulator, bluejay in
            let bodySensorLocation = HeartRate.bodySensorLocation
            // --- docs/SIMULATOR.md, "Pairing with the simulator" ---
            let lock = SimulatedPeripheral(name: "Lock", services: [
                SimulatedService(uuid: "FFF0", characteristics: [
                    SimulatedCharacteristic(uuid: "FFF1", properties: [.read, .write], value: [0x00], security: .encryption),
                ]),
            ])
            _ = try await simulator.add(lock)

            var sensor = HeartRateSensor.Configuration()
            sensor.locationSecurity = .encryption                 // a "locked" Body Sensor Location
            let hrm = try await simulator.addHeartRateSensor(sensor)
            try await bluejay.connect(hrm.device.peripheralIdentifier, timeout: .seconds(5))
            let location: UInt8 = try await bluejay.read(from: bodySensorLocation)   // pairs (Just Works), then reads
            // --- end ---
            #expect(location == HeartRateProfile.BodySensorLocation.chest.rawValue)
            #expect(bluejay.linkSecurity?.isBonded == true)
            // The lock refuses an unencrypted read too.
            try await bluejay.disconnect()
            try await bluejay.connect(try #require(simulator.devices.first(where: { $0.declaration.name == "Lock" })).peripheralIdentifier, timeout: .seconds(5))
            let locked: UInt8 = try await bluejay.read(from: CharacteristicIdentifier(uuid: "FFF1", service: ServiceIdentifier(uuid: "FFF0")))
            #expect(locked == 0 && bluejay.linkSecurity?.isEncrypted == true)
        }
    }

    @Test("The declaration maps security onto the characteristic's permissions")
    func declarationSecurity() {
        var characteristic = SimulatedCharacteristic(uuid: "FF01", properties: [.read, .write], security: [.authentication, .key128])
        #expect(characteristic.definition.permissions.contains([.readEncryptionRequired, .readAuthenticationRequired,
                                                                .writeEncryptionRequired, .writeAuthenticationRequired]))
        #expect(characteristic.definition.minimumKeySize == 16)
        characteristic.writeSecurity = []
        characteristic.readSecurity = .encryption
        #expect(characteristic.definition.permissions == [.readable, .writeable, .readEncryptionRequired])
        #expect(characteristic.definition.minimumKeySize == 7)
        let readOnly = SimulatedCharacteristic(uuid: "FF02", properties: [.read], writeSecurity: .encryption)
        #expect(readOnly.definition.permissions == [.readable], "write security on a characteristic nobody may write adds nothing")
    }
}
