import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// The examples of docs/SIMULATOR.md, as they are printed there (`HeartRateMeasurement` is
/// the type of the README's Bluejay example).
@Suite("docs/SIMULATOR.md: a unit test against simulated peripherals", .timeLimit(.minutes(1)))
struct ReadmeExampleTests {
    let heartRateService = ServiceIdentifier(uuid: "180D")
    var heartRate: CharacteristicIdentifier { CharacteristicIdentifier(uuid: "2A37", service: heartRateService) }
    var bodySensorLocation: CharacteristicIdentifier { CharacteristicIdentifier(uuid: "2A38", service: heartRateService) }

    @Test func heartRateMonitor() async throws {
        // A virtual radio with a simulated heart-rate sensor on it, and Bluejay on the same radio.
        let simulator = Simulator()
        let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([72, 75, 300]), measurementInterval: .milliseconds(50)))
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .transport(simulator.centralTransport()))))
        try await bluejay.waitUntilReady()

        try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5))
        let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
        #expect(location == 1) // Chest

        try await bluejay.write(to: bodySensorLocation, value: UInt8(2))
        #expect(await sensor.location == .wrist)

        var rates: [Int] = []
        for try await measurement in try await bluejay.listen(to: heartRate) as ValueStream<HeartRateMeasurement> {
            rates.append(measurement.measurement)
            if rates.count == 3 { break }
        }
        #expect(Set(rates) == [72, 75, 300]) // 300 arrives in the 16-bit form

        // The next write fails as the peripheral says: a typed error.
        sensor.device.failNextRequests(.attError(.writeNotPermitted), on: "2A38")
        await #expect(throws: BluejayError.self) { try await bluejay.write(to: bodySensorLocation, value: UInt8(3)) }

        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test func declaredPeripheral() async throws {
        // Any peripheral, declared in the test: values, handlers, delays.
        let thermometer = SimulatedPeripheral(name: "Thermo", services: [
            SimulatedService(uuid: "1809", characteristics: [
                SimulatedCharacteristic(uuid: "2A6E", properties: [.read], value: [0x2C, 0x09]),       // 23.48 °C
                SimulatedCharacteristic(uuid: "2A21", properties: [.read, .write], value: [60], responseDelay: .milliseconds(100),
                                        onWrite: { write in write.value.count == 1 ? .success : .error(.invalidAttributeValueLength) }),
            ]),
        ])
        let simulator = Simulator(timeScale: 10) // the radio runs 10× faster: a 5 s supervision timeout takes 0.5 s
        let device = try await simulator.add(thermometer)
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .transport(simulator.centralTransport()))))
        try await bluejay.waitUntilReady()
        try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(5))

        let temperature = CharacteristicIdentifier(uuid: "2A6E", service: ServiceIdentifier(uuid: "1809"))
        let raw: Int16 = try await bluejay.read(from: temperature)
        #expect(raw == 2348)
        let interval = CharacteristicIdentifier(uuid: "2A21", service: ServiceIdentifier(uuid: "1809"))
        try await bluejay.write(to: interval, value: UInt8(30))                    // answered 100 ms later
        await #expect(throws: BluejayError.self) { try await bluejay.write(to: interval, value: UInt16(30)) } // refused by onWrite

        // Out of range: the link ends by supervision timeout and Bluejay says so.
        let disconnections = bluejay.connectionEvents()
        try device.moveOutOfRange()
        var disconnection: ConnectionEvent?
        for await event in disconnections {
            if case .disconnected = event {
                disconnection = event
                break
            }
        }
        let peripheral = device.peripheralIdentifier
        // An unexpected disconnection: Bluejay will reconnect on its own.
        #expect(disconnection == .disconnected(peripheral, error: .disconnected(peripheral, reason: .connectionTimeout), willReconnect: true),
                "\(String(describing: disconnection))")
        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test("The simulated-time example: Bluejay's operation limit passes while the peripheral still delays")
    func simulatedTime() async throws {
        let thermometer = SimulatedPeripheral(name: "Thermo", services: [
            SimulatedService(uuid: "1809", characteristics: [
                SimulatedCharacteristic(uuid: "2A6E", properties: [.read], value: [0x2C, 0x09]),
            ]),
        ])
        let temperature = CharacteristicIdentifier(uuid: "2A6E", service: ServiceIdentifier(uuid: "1809"))

        // --- docs/SIMULATOR.md, "Simulated time" ---
        let peripheralTime = ManualClock()
        let appTime = ManualClock()
        let simulator = Simulator(clock: .manual(peripheralTime))   // the peripherals' rates and delays
        let device = try await simulator.add(thermometer)
        device.setResponseDelay(.seconds(5), for: "2A6E")            // holds its answers 5 s

        var options = StartOptions(transport: .transport(simulator.centralTransport()), operationTimeout: .seconds(2))
        options.hostConfiguration.clock = .manual(appTime)           // Bluejay's and its host's timers
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options))
        try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(5))

        let read = Task { try await bluejay.read(from: temperature) as Int16 }
        try await peripheralTime.waitForSleepingTasks(1)             // the request arrived; its answer waits
        appTime.advance(by: .seconds(2))                             // Bluejay's limit passes first
        await #expect(throws: BluejayError.self) { try await read.value }    // timedOut(operation:after: 2 s)
        // --- end ---

        do {
            _ = try await read.value
        } catch let BluejayError.timedOut(operation, after) {
            #expect(operation.contains("2A6E") && after == .seconds(2))
        }
        #expect(peripheralTime.now == .zero, "no time passed for the peripheral: it timed out on Bluejay's clock")
        await bluejay.stop()
        await simulator.shutdown()
    }
}
