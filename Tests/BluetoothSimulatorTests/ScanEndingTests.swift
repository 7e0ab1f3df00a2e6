@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// LittleBluetooth's scan endings: a timeout that fails when nothing was found, and a scan
/// that ends when the app connects.
@Suite("Scans that time out or end at a connection", .timeLimit(.minutes(1)))
struct ScanEndingTests {
    static let nobodyService = ServiceIdentifier(uuid: "FEE1")
    static let heartRateService = ServiceIdentifier(uuid: "180D")

    @Test("A scan with a timeout and nothing matching fails with scanTimeout when the (simulated) time is up, in both APIs")
    func timeoutWithNothingFound() async throws {
        let clock = ManualClock()
        try await withSimulator(bluejayClock: .manual(clock)) { simulator, bluejay in
            _ = try await simulator.addHeartRateSensor()
            let started = clock.now
            let stream = bluejay.scan(timeout: 5, serviceIdentifiers: [Self.nobodyService])
            let outcome = Task { () -> String in
                do {
                    for try await event in stream { return "event \(event)" }
                    return "ended"
                } catch {
                    return "\(error)"
                }
            }
            let ended = await step(clock, until: { !bluejay.isScanning })
            #expect(await outcome.value == "\(BluejayError.scanTimeout(after: .seconds(5)))")
            #expect(ended - started >= .seconds(5), "not before the timeout: \(ended - started)")
            #expect(ended - started < .seconds(6), "at the timeout: \(ended - started)")

            // The callback form reports it to `stopped`.
            let stopped = AwaitableLog<BluejayError?>()
            let callbackStart = clock.now
            bluejay.scan(timeout: 2, serviceIdentifiers: [Self.nobodyService], discovery: { _, _ in .continue },
                         stopped: { _, error in stopped.append(error) })
            let callbackEnd = await step(clock, until: { stopped.count > 0 })
            #expect(stopped.items == [.scanTimeout(after: .seconds(2))])
            #expect(callbackEnd - callbackStart >= .seconds(2) && callbackEnd - callbackStart < .seconds(3))
        }
    }

    @Test("A scan that found something before its timeout goes on past it, and stops without an error")
    func timeoutAfterADiscovery() async throws {
        let clock = ManualClock()
        try await withSimulator(bluejayClock: .manual(clock)) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor()
            var iterator = bluejay.scan(timeout: 5, serviceIdentifiers: [Self.heartRateService]).makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.discovery.peripheralIdentifier == sensor.device.peripheralIdentifier)
            // Ten simulated seconds, the scan's ticker checking at each step, twice the timeout.
            let start = clock.now
            await step(clock, until: { clock.now - start >= .seconds(10) })
            #expect(bluejay.isScanning)
            bluejay.stopScanning()
            while try await iterator.next() != nil {}
            #expect(!bluejay.isScanning)
        }
    }

    @Test("With endsWhenConnecting, a connect ends the scan (no error) instead of queueing behind it; without, the scan goes on")
    func scanEndsWhenConnecting() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor()
            // Without the option the connect waits behind the scan, which goes on.
            var held = bluejay.scan(serviceIdentifiers: [Self.heartRateService]).makeAsyncIterator()
            _ = try await held.next()
            let waiting = Task { try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5)) }
            try await waitUntil("the connect queued") { bluejay.runner.count == 2 }
            #expect(bluejay.isScanning && !bluejay.isConnected)
            bluejay.stopScanning()
            _ = try await waiting.value
            try await bluejay.disconnect()

            let stream = bluejay.scan(endsWhenConnecting: true, serviceIdentifiers: [Self.heartRateService])
            var found: PeripheralIdentifier?
            for try await event in stream {
                found = event.discovery.peripheralIdentifier
                // Connecting from inside the loop: the scan ends, the loop ends, the connect goes ahead.
                Task { try await bluejay.connect(event.discovery.peripheralIdentifier, timeout: .seconds(5)) }
                try await waitUntil("the scan to end") { !bluejay.isScanning }
            }
            #expect(found == sensor.device.peripheralIdentifier)
            try await waitUntil("connected") { bluejay.isConnected }
            try await bluejay.disconnect()
        }
    }
}
