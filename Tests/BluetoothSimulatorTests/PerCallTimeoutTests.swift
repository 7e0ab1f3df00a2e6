@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// BlueCap's per-call timeouts: a read or write's own limit instead of the operation time limit.
@Suite("Per-call timeouts", .timeLimit(.minutes(1)))
struct PerCallTimeoutTests {
    static let slow = CharacteristicIdentifier(uuid: "FFD1", service: ServiceIdentifier(uuid: "FFD0"))

    @Test("timeout: replaces the operation limit, shorter (timedOut after it) or none (the late answer arrives)")
    func perCallTimeout() async throws {
        let peripheralClock = ManualClock()
        let bluejayClock = ManualClock()
        try await withSimulator(operationTimeout: 10, simulatorClock: .manual(peripheralClock), bluejayClock: .manual(bluejayClock)) { simulator, bluejay in
            let device = try await simulator.add(SimulatedPeripheral(name: "Slow", services: [
                SimulatedService(uuid: "FFD0", characteristics: [
                    SimulatedCharacteristic(uuid: "FFD1", properties: [.read, .write], value: [7], responseDelay: .seconds(20)),
                ]),
            ]))
            try await connect(bluejay, to: device)

            // A 2 s limit of its own: it fails after 2 s of Bluejay's time, not the operation's 10 s.
            let started = bluejayClock.now
            let shortRead = Task { try await bluejay.read(from: Self.slow, timeout: .seconds(2)) as UInt8 }
            try await peripheralClock.waitForSleepingTasks(1)   // the peripheral holds the answer
            await step(bluejayClock, until: { shortRead.isCancelled || bluejay.runner.count == 0 })
            do {
                _ = try await shortRead.value
                Issue.record("the read did not time out")
            } catch let BluejayError.timedOut(operation, after) {
                #expect(after == .seconds(2) && operation.contains("FFD1"))
            }
            #expect(bluejayClock.now - started >= .seconds(2) && bluejayClock.now - started < .seconds(3),
                    "\(bluejayClock.now - started)")
            peripheralClock.advance(by: .seconds(20))   // the abandoned read's late answer

            // No limit at all: the operation's 10 s pass, the answer comes when the peripheral gives it.
            let patient = AwaitableLog<ReadResult<UInt8>>()
            bluejay.read(from: Self.slow, timeout: Timeout.none) { (result: ReadResult<UInt8>) in patient.append(result) }
            try await peripheralClock.waitForSleepingTasks(1)
            bluejayClock.advance(by: .seconds(15))
            #expect(await patient.wait(timeout: .milliseconds(200)) { !$0.isEmpty } == nil, "still waiting past the operation limit")
            peripheralClock.advance(by: .seconds(20))
            #expect(await patient.wait(forCount: 1) == [.success(7)])
            try await bluejay.disconnect()
        }
    }
}
