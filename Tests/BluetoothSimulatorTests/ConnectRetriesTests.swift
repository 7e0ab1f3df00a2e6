@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// BlueCap's `connect(timeoutRetries:disconnectRetries:connectionTimeout:)`: limited retries
/// after timeouts and after dropped links, then the give-up event.
@Suite("Connecting with retry limits", .timeLimit(.minutes(1)))
struct ConnectRetriesTests {
    /// Collects the connection events, without availability.
    private static func collect(_ bluejay: Bluejay) -> (AwaitableLog<ConnectionEvent>, Task<Void, Never>) {
        let events = AwaitableLog<ConnectionEvent>()
        let stream = bluejay.connectionEvents()
        let task = Task {
            for await event in stream {
                if case .bluetoothAvailable = event { continue }
                events.append(event)
            }
        }
        return (events, task)
    }

    @Test("A peer that never answers: the attempt is tried again timeoutRetries times, each after its timeout, then Bluejay gives up")
    func timeoutRetries() async throws {
        let clock = ManualClock()
        try await withSimulator(bluejayClock: .manual(clock)) { simulator, bluejay in
            let device = try await simulator.addHeartRateSensor(.init(measurementInterval: nil)).device
            let peripheral = device.peripheralIdentifier
            try device.setConnectionAcceptance(.ignore)
            let (events, collector) = Self.collect(bluejay)
            defer { collector.cancel() }

            let outcome = AwaitableLog<ConnectionResult>()
            let started = clock.now
            bluejay.connect(peripheral, timeoutRetries: 2, disconnectRetries: 0, connectionTimeout: .seconds(4)) { outcome.append($0) }
            await step(clock, until: { outcome.count > 0 })
            #expect(outcome.items == [.failure(.connectionTimedOut(peripheral))])
            let failed = ConnectionEvent.connectionFailed(peripheral, error: .connectionTimedOut(peripheral))
            // The events come through a stream: the give-up may reach it just after the completion.
            #expect(await events.wait(forCount: 6) == [
                failed, .reconnecting(peripheral), failed, .reconnecting(peripheral), failed,
                .gaveUp(peripheral, error: .connectionTimedOut(peripheral)),
            ], "\(events.items)")
            let elapsed = clock.now - started
            #expect(elapsed >= .seconds(12) && elapsed < .seconds(13), "three attempts of 4 s: \(elapsed)")
            #expect(!bluejay.isConnecting && !bluejay.isConnected)

            // The peer answers on a retry: the connection succeeds, with no give-up.
            let second = AwaitableLog<ConnectionResult>()
            bluejay.connect(peripheral, timeoutRetries: 3, disconnectRetries: 0, connectionTimeout: .seconds(4)) { second.append($0) }
            try await waitUntil("the first attempt runs") { bluejay.isConnecting }
            await step(clock, until: { events.count > 7 })   // the first attempt timed out and the retry starts
            try device.setConnectionAcceptance(.accept)
            await step(clock, until: { second.count > 0 })
            #expect(second.items == [.success(peripheral)])
            #expect(!events.items.dropFirst(6).contains { if case .gaveUp = $0 { return true } else { return false } }, "\(events.items)")
            try await bluejay.disconnect()
        }
    }

    @Test("A link that drops is reconnected disconnectRetries times in all, then Bluejay gives up")
    func disconnectRetries() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.addHeartRateSensor(.init(measurementInterval: nil)).device
            let peripheral = device.peripheralIdentifier
            let (events, collector) = Self.collect(bluejay)
            defer { collector.cancel() }
            try await bluejay.connect(peripheral, timeoutRetries: 0, disconnectRetries: 2, connectionTimeout: .seconds(5))
            let dropped = ConnectionEvent.disconnected(peripheral, error: .disconnected(peripheral, reason: .connectionTimeout), willReconnect: true)
            for count in 1...2 {
                await device.dropAllLinks()
                let seen = await events.wait(forCount: 1 + 4 * count)
                #expect(seen.map { Array($0.suffix(4)) } == [dropped, .reconnecting(peripheral), .connected(peripheral), .autoConnected(peripheral)],
                        "reconnection \(count): \(events.items)")
            }
            // The third drop: no retries left.
            await device.dropAllLinks()
            let last = await events.wait(forCount: 11)
            #expect(last.map { Array($0.suffix(2)) } == [
                .disconnected(peripheral, error: .disconnected(peripheral, reason: .connectionTimeout), willReconnect: false),
                .gaveUp(peripheral, error: .disconnected(peripheral, reason: .connectionTimeout)),
            ], "\(events.items)")
            try await waitUntil("idle") { !bluejay.isConnected && !bluejay.isConnecting }
            #expect(events.count == 11)

            // A plain connect goes back to Bluejay's own rules: a drop is reconnected whatever came before.
            try await bluejay.connect(peripheral, timeout: .seconds(5))
            await device.dropAllLinks()
            let plain = await events.wait(forCount: 16)
            #expect(plain.map { Array($0.suffix(3)) } == [.reconnecting(peripheral), .connected(peripheral), .autoConnected(peripheral)],
                    "\(events.items)")
            try await bluejay.disconnect()
        }
    }
}
