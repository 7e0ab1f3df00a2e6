@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// LittleBluetooth's connection events in Bluejay's stream: connected, autoConnected,
/// connectionFailed, reconnecting, gaveUp, disconnected.
@Suite("Connection events", .timeLimit(.minutes(1)))
struct ConnectionEventTests {
    @Test("Auto-reconnect reports reconnecting then connected and autoConnected; a timed-out attempt gives up; a failed request is connectionFailed")
    func connectionEvents() async throws {
        let clock = ManualClock()
        try await withSimulator(bluejayClock: .manual(clock)) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let device = sensor.device
            let peripheral = device.peripheralIdentifier
            let events = AwaitableLog<ConnectionEvent>()
            let stream = bluejay.connectionEvents()
            let collector = Task {
                for await event in stream {
                    if case .bluetoothAvailable = event { continue }
                    events.append(event)
                }
            }
            defer { collector.cancel() }

            // A connection the app asks for fails: connectionFailed, no retry.
            try device.setConnectionAcceptance(.failToEstablish)
            await #expect(throws: BluejayError.self) { try await bluejay.connect(peripheral, timeout: .seconds(5)) }
            _ = await events.wait(forCount: 1)
            #expect(events.items == [.connectionFailed(peripheral, error: .connectionFailed(peripheral, .connectionFailedToBeEstablished))],
                    "\(events.items)")
            #expect(!bluejay.isConnecting)
            try device.setConnectionAcceptance(.accept)

            try await bluejay.connect(peripheral, timeout: .seconds(5))
            #expect(await events.wait(forCount: 2)?.last == .connected(peripheral))

            // The link drops; Bluejay reconnects on its own.
            await device.dropAllLinks()
            _ = await events.wait(forCount: 6)
            #expect(Array(events.items.dropFirst(1)) == [
                .connected(peripheral),
                .disconnected(peripheral, error: .disconnected(peripheral, reason: .connectionTimeout), willReconnect: true),
                .reconnecting(peripheral), .connected(peripheral), .autoConnected(peripheral),
            ], "\(events.items)")

            // The link drops again and the peripheral ignores the reconnection: the attempt times out
            // (5 s of Bluejay's simulated time) and auto-reconnect gives up.
            try device.setConnectionAcceptance(.ignore)
            await device.dropAllLinks()
            _ = await events.wait(forCount: 8)
            #expect(Array(events.items.suffix(2)) == [
                .disconnected(peripheral, error: .disconnected(peripheral, reason: .connectionTimeout), willReconnect: true),
                .reconnecting(peripheral),
            ], "\(events.items)")
            let started = clock.now
            // Bluejay's time moves 100 ms at a time until it gives up.
            await step(clock, until: { events.count > 8 })
            #expect(events.items.last == .gaveUp(peripheral, error: .connectionTimedOut(peripheral)), "\(events.items)")
            #expect(clock.now - started >= .seconds(5), "not before the attempt's 5 s: \(clock.now - started)")
            #expect(events.count == 9)
            try await waitUntil("idle") { !bluejay.isConnected && !bluejay.isConnecting }
        }
    }

    @Test("The peripheral state stream: the state now, then connecting, connected, disconnecting, disconnected; a failed attempt goes back to disconnected")
    func peripheralStates() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.addHeartRateSensor(.init(measurementInterval: nil)).device
            let peripheral = device.peripheralIdentifier
            let states = AwaitableLog<PeripheralState>()
            let stream = bluejay.peripheralStates()
            let collector = Task { for await state in stream { states.append(state) } }
            defer { collector.cancel() }
            #expect(await states.wait(forCount: 1) == [.disconnected])

            try await bluejay.connect(peripheral, timeout: .seconds(5))
            #expect(bluejay.peripheralState == .connected(peripheral))
            try await bluejay.disconnect()
            #expect(await states.wait(forCount: 5) == [
                .disconnected, .connecting(peripheral), .connected(peripheral), .disconnecting(peripheral), .disconnected,
            ])

            try device.setConnectionAcceptance(.failToEstablish)
            await #expect(throws: BluejayError.self) { try await bluejay.connect(peripheral, timeout: .seconds(5)) }
            #expect(await states.wait(forCount: 7).map { Array($0.suffix(2)) } == [.connecting(peripheral), .disconnected])

            // An unexpected drop goes to disconnected, then connecting again for the auto-reconnect.
            try device.setConnectionAcceptance(.accept)
            try await bluejay.connect(peripheral, timeout: .seconds(5))
            await device.dropAllLinks()
            let afterDrop = await states.wait { $0.count >= 12 }
            #expect(afterDrop.map { Array($0.dropFirst(7)) } == [
                .connecting(peripheral), .connected(peripheral), .disconnected, .connecting(peripheral), .connected(peripheral),
            ], "\(states.items)")
            try await bluejay.disconnect()
        }
    }
}
