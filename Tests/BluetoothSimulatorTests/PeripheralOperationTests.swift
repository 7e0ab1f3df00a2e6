@testable import Bluejay
import BluetoothHost
import BluetoothSimulator
import Foundation
import Testing

/// BleManager's extension point: app-defined operations in the peripheral's FIFO queue, with
/// the queue's order, time limits, cancellation and disconnection handling; and the state
/// callback of each ``RemotePeripheral``.
@Suite("App-defined queued operations", .timeLimit(.minutes(1)))
struct PeripheralOperationTests {
    static let location = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
    static let controlPoint = CharacteristicIdentifier(uuid: "2A39", service: ServiceIdentifier(uuid: "180D"))

    /// Reads the body sensor location, noting its start in `log`.
    struct ReadLocation: PeripheralOperation {
        let log: AwaitableLog<String>
        func start(on peripheral: OperationPeripheral) async throws -> UInt8 {
            log.append("operation")
            return try await peripheral.read(from: PeripheralOperationTests.location)
        }
    }

    /// Waits until it is aborted (what an app's operation waiting for something of its own does).
    struct WaitForever: PeripheralOperation {
        var timeout: Timeout? = nil
        let started = AwaitableLog<Bool>()
        let aborts = AwaitableLog<String>()
        let gate = AsyncStream<Void>.makeStream()
        var name: String { "wait forever" }

        func start(on peripheral: OperationPeripheral) async throws -> Int {
            started.append(true)
            for await _ in gate.stream {}
            return 0
        }

        func abort(because error: BluejayError) {
            aborts.append(Self.describe(error))
            gate.continuation.finish()
        }

        static func describe(_ error: BluejayError) -> String {
            switch error {
            case .timedOut: return "timedOut"
            case .cancelled: return "cancelled"
            case .disconnected: return "disconnected"
            default: return "\(error)"
            }
        }
    }

    @Test("An app's operation runs in its place in the FIFO queue, between Bluejay's own, and acts on the peripheral")
    func fifoOrder() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)
            // The operation reads what the write queued before it wrote, and not what the write
            // queued after it writes: it ran between them. (Its start is not ordered against the
            // callbacks: those run on the callback queue, the operation in a task of its own.)
            let log = AwaitableLog<String>()
            bluejay.write(to: Self.location, value: UInt8(2)) { _ in log.append("write before") }
            let outcome = AwaitableLog<ReadResult<UInt8>>()
            bluejay.run(ReadLocation(log: AwaitableLog())) { result in
                log.append("operation done")
                outcome.append(result)
            }
            bluejay.write(to: Self.location, value: UInt8(3)) { _ in log.append("write after") }
            #expect(await log.wait(forCount: 3) == ["write before", "operation done", "write after"])
            #expect(outcome.items == [.success(2)])
            // The async form.
            #expect(try await bluejay.run(ReadLocation(log: log)) == 3)
            try await bluejay.disconnect()
        }
    }

    @Test("Its time limit, its caller's cancellation and a dropped link end it as they end Bluejay's own operations")
    func limitsAndCancellation() async throws {
        let bluejayClock = ManualClock()
        try await withSimulator(operationTimeout: 10, bluejayClock: .manual(bluejayClock)) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)

            // Its own limit (2 s, not the operation limit's 10 s): timedOut, abort told, the queue goes on.
            let limited = WaitForever(timeout: .seconds(2))
            let outcome = AwaitableLog<String>()
            bluejay.run(limited) { result in
                if case let .failure(error) = result { outcome.append(WaitForever.describe(error)) }
            }
            let after = AwaitableLog<ReadResult<UInt8>>()
            bluejay.read(from: Self.location) { (result: ReadResult<UInt8>) in after.append(result) }
            let start = bluejayClock.now
            _ = await limited.started.wait(forCount: 1)
            try await waitUntil("the operation's timer is set") { bluejayClock.nextDeadline == start + .seconds(2) }
            bluejayClock.advance(by: .milliseconds(1999))
            #expect(await outcome.wait(timeout: .milliseconds(100)) { !$0.isEmpty } == nil, "not before its limit")
            bluejayClock.advance(by: .milliseconds(1))
            #expect(await outcome.wait(forCount: 1) == ["timedOut"])
            #expect(await limited.aborts.wait(forCount: 1) == ["timedOut"])
            #expect(await after.wait(forCount: 1) == [.success(1)], "the next operation runs")

            // The async caller's task is cancelled.
            let cancelled = WaitForever(timeout: Timeout.none)
            let caller = Task { try await bluejay.run(cancelled) }
            _ = await cancelled.started.wait(forCount: 1)
            caller.cancel()
            await #expect(throws: BluejayError.cancelled) { try await caller.value }
            #expect(await cancelled.aborts.wait(forCount: 1) == ["cancelled"])

            // The link drops while it runs.
            let dropped = WaitForever(timeout: Timeout.none)
            let running = Task { try await bluejay.run(dropped) }
            _ = await dropped.started.wait(forCount: 1)
            await sensor.device.dropAllLinks()
            do {
                _ = try await running.value
                Issue.record("the operation outlived the link")
            } catch let error as BluejayError {
                #expect(WaitForever.describe(error) == "disconnected")
            }
            #expect(await dropped.aborts.wait(forCount: 1) == ["disconnected"])
        }
    }

    @Test("A RemotePeripheral runs app operations in its own queue and reports its state: connected, disconnecting, disconnected")
    func remotePeripheral() async throws {
        let simulator = Simulator()
        let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
        let clock = ManualClock()
        var configuration = HostConfiguration()
        configuration.clock = .manual(clock)
        let host = LEHost(transport: simulator.centralTransport(), configuration: configuration)
        try await host.powerOn()
        let central = BluejayCentral(host: host)
        let peripheral = try await central.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5))
        let states = AwaitableLog<RemotePeripheral.State>()
        peripheral.onStateChange { states.append($0) }
        var stream = peripheral.states().makeAsyncIterator()
        #expect(await states.wait(forCount: 1) == [.connected])
        #expect(await stream.next() == .connected)

        let log = AwaitableLog<String>()
        #expect(try await peripheral.run(ReadLocation(log: log)) == 1)
        let limited = WaitForever(timeout: .seconds(3))
        let timing = Task { try await peripheral.run(limited) }
        let start = clock.now
        _ = await limited.started.wait(forCount: 1)
        try await waitUntil("the operation's timer is set") { clock.nextDeadline == start + .seconds(3) }
        clock.advance(by: .seconds(3))
        await #expect(throws: BluejayError.timedOut(operation: "wait forever", after: .seconds(3))) { try await timing.value }
        #expect(await limited.aborts.wait(forCount: 1) == ["timedOut"])

        try await peripheral.disconnect()
        let seen = await states.wait(forCount: 3)
        #expect(seen?.prefix(2) == [.connected, .disconnecting], "\(String(describing: seen))")
        if case .disconnected? = seen?.last {} else { Issue.record("not disconnected: \(String(describing: seen))") }
        #expect(await stream.next() == .disconnecting)
        if case .disconnected? = await stream.next() {} else { Issue.record("the stream did not end disconnected") }
        #expect(await stream.next() == nil, "the stream ends with the link")
        await #expect(throws: BluejayError.self) { try await peripheral.run(ReadLocation(log: log)) }
        await host.shutdown()
        await simulator.shutdown()
    }
}
