@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// LittleBluetooth's connection tasks: after every connect, before anything queued.
@Suite("Connection tasks", .timeLimit(.minutes(1)))
struct ConnectionTaskTests {
    static let location = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
    static let battery = CharacteristicIdentifier(uuid: "2A19", service: ServiceIdentifier(uuid: "180F"))

    struct Refused: Error {}

    @Test("Tasks run in order after every connection (requested and auto-reconnected), before what was queued behind the connect")
    func runAfterEveryConnection() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let log = AwaitableLog<String>()
            bluejay.addConnectionTask(named: "configure") { peripheral in
                try await peripheral.write(to: Self.location, value: UInt8(3))
                log.append("configure \(peripheral.identifier == sensor.device.peripheralIdentifier)")
            }
            let removed = bluejay.addConnectionTask(named: "removed") { _ in log.append("removed ran") }
            bluejay.addConnectionTask(named: "battery") { peripheral in
                let level: UInt8 = try await peripheral.read(from: Self.battery)
                log.append("battery \(level)")
            }
            bluejay.removeConnectionTask(removed)

            // Queued right behind the connect: it sees the task's write.
            bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5)) { _ in log.append("connected") }
            bluejay.read(from: Self.location) { (result: ReadResult<UInt8>) in log.append("read \(result)") }
            #expect(await log.wait(forCount: 4) == ["configure true", "battery 87", "connected", "read success(3)"])

            // An auto-reconnect runs them again before the connection is announced.
            let events = bluejay.connectionEvents()
            try await sensor.device.setValue([2], of: "2A38")
            await sensor.device.dropAllLinks()
            for await event in events {
                if case .autoConnected = event { break }
            }
            #expect(Array(log.items.suffix(2)) == ["configure true", "battery 87"], "\(log.items)")
            #expect(await sensor.device.value(of: "2A38") == [3])
            try await bluejay.disconnect()
        }
    }

    @Test("A task that throws refuses the connection: the connect fails with its error, Bluejay disconnects and does not reconnect")
    func refusal() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            bluejay.addConnectionTask(named: "authenticate") { _ in throw Refused() }
            do {
                try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5))
                Issue.record("the connection was not refused")
            } catch let BluejayError.connectionTaskFailed(task, reason) {
                #expect(task == "authenticate" && reason.contains("Refused"))
            }
            try await waitUntil("disconnected") { sensor.device.connectedCentrals.isEmpty }
            #expect(!bluejay.isConnected && !bluejay.isConnecting && !bluejay.shouldAutoReconnect)
        }
    }
}
