@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// BlueCap's scan-then-connect: the first peripheral that matches.
@Suite("Scan, then connect to the first match", .timeLimit(.minutes(1)))
struct ConnectToFirstTests {
    @Test("Connects to the first discovery that matches, not the others; the scan has ended")
    func firstMatch() async throws {
        try await withSimulator { simulator, bluejay in
            _ = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let thermometer = try await simulator.add(SimulatedPeripheral(name: "Thermo", services: [
                SimulatedService(uuid: "1809", characteristics: [SimulatedCharacteristic(uuid: "2A1C", properties: [.read], value: [0])]),
            ]))
            let connected = try await bluejay.connectToFirst(serviceIdentifiers: nil, connectionTimeout: .seconds(5)) { $0.localName == "Thermo" }
            #expect(connected == thermometer.peripheralIdentifier)
            #expect(bluejay.connectedPeripheral == thermometer.peripheralIdentifier && !bluejay.isScanning)
            try await bluejay.disconnect()
        }
    }

    @Test("No match within scanTimeout (simulated time), even with other peripherals heard: scanTimeout")
    func noMatch() async throws {
        let clock = ManualClock()
        try await withSimulator(bluejayClock: .manual(clock)) { simulator, bluejay in
            _ = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let outcome = Task { () -> String in
                do {
                    return "connected to \(try await bluejay.connectToFirst(serviceIdentifiers: nil, scanTimeout: 3) { $0.localName == "Nobody" })"
                } catch {
                    return "\(error)"
                }
            }
            let done = AwaitableLog<String>()
            Task { done.append(await outcome.value) }
            let started = clock.now
            let ended = await step(clock, until: { done.count > 0 })
            #expect(done.items == ["\(BluejayError.scanTimeout(after: .seconds(3)))"])
            #expect(ended - started >= .seconds(3) && ended - started < .seconds(4), "\(ended - started)")
            #expect(await eventually { !bluejay.isScanning })
        }
    }

    @Test("Cancelling the call stops its scan")
    func cancellation() async throws {
        try await withSimulator { simulator, bluejay in
            _ = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let call = Task { try await bluejay.connectToFirst(serviceIdentifiers: nil) { _ in false } }
            try await waitUntil("scanning") { bluejay.isScanning }
            call.cancel()
            await #expect(throws: BluejayError.self) { try await call.value }
            try await waitUntil("the scan stopped") { !bluejay.isScanning }
        }
    }
}
