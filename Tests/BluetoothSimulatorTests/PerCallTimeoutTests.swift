@testable import Bluejay
import BluetoothHost
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

    @Test("Every other request takes timeout: too (descriptors, listen, discovery): a zero limit fails it at once, a longer one or none lets it succeed")
    func everyOperation() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)
            let battery = CharacteristicIdentifier(uuid: "2A19", service: ServiceIdentifier(uuid: "180F"))
            let userDescription = DescriptorIdentifier(uuid: "2901", characteristic: battery)
            let configuration = DescriptorIdentifier(uuid: "2902", characteristic: battery)
            let zero = Timeout.seconds(0)
            func expectTimedOut(_ what: String, _ body: () async throws -> Void) async {
                do {
                    try await body()
                    Issue.record("\(what) did not time out")
                } catch let BluejayError.timedOut(_, after) {
                    #expect(after == .zero, "\(what)")
                } catch {
                    Issue.record("\(what): \(error)")
                }
            }
            await expectTimedOut("descriptor read") { _ = try await bluejay.read(from: userDescription, timeout: zero) as String }
            #expect(try await bluejay.read(from: userDescription, timeout: Timeout.none) as String == "Battery level")
            await expectTimedOut("descriptor write") { try await bluejay.write(to: configuration, value: UInt16(0), timeout: zero) }
            try await bluejay.write(to: configuration, value: UInt16(0), timeout: .seconds(5))
            #expect(try await bluejay.rssi(timeout: .seconds(5)) < 0)
            await expectTimedOut("discovery") { _ = try await bluejay.discoverServices(timeout: zero) }
            let location = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
            await expectTimedOut("writeAndRead") {
                _ = try await bluejay.writeAndRead(writeTo: location, value: UInt8(2), readFrom: location, timeout: zero) as UInt8
            }
            #expect(try await bluejay.writeAndRead(writeTo: location, value: UInt8(2), readFrom: location, timeout: .seconds(5)) as UInt8 == 2)
            await expectTimedOut("listen") { _ = try await bluejay.listen(to: battery, timeout: zero) as ValueStream<UInt8> }
            #expect(!bluejay.isListening(to: battery), "a listen that timed out is not installed")

            let callbacks = AwaitableLog<String>()
            bluejay.read(from: userDescription, timeout: zero) { (result: ReadResult<String>) in callbacks.append("read \(result.isTimedOut)") }
            bluejay.write(to: configuration, value: UInt16(0), timeout: zero) { result in callbacks.append("write \(result.isTimedOut)") }
            let heartRate = CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))
            bluejay.listen(to: heartRate, timeout: zero) { (result: ReadResult<Data>) in callbacks.append("listen \(result.isTimedOut)") }
            #expect(await callbacks.wait(forCount: 3) == ["read true", "write true", "listen true"])

            _ = try await bluejay.listen(to: battery, timeout: .seconds(5)) as ValueStream<UInt8>
            try await bluejay.endListen(to: battery, timeout: .seconds(5))
            #expect(!bluejay.isListening(to: battery))
            try await bluejay.disconnect()
        }
    }

    @Test("A RemotePeripheral's requests take timeout: in place of the central's operation limit")
    func remotePeripheralTimeouts() async throws {
        let simulator = Simulator()
        let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
        let host = LEHost(transport: simulator.centralTransport())
        try await host.powerOn()
        let central = BluejayCentral(host: host)
        let peripheral = try await central.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5))
        let location = CharacteristicIdentifier(uuid: "2A38", service: ServiceIdentifier(uuid: "180D"))
        await #expect(throws: BluejayError.timedOut(operation: "read 2A38 in 180D", after: .zero)) {
            _ = try await peripheral.read(from: location, timeout: .seconds(0)) as UInt8
        }
        await #expect(throws: BluejayError.self) { _ = try await peripheral.discoverServices(timeout: .seconds(0)) }
        #expect(try await peripheral.read(from: location, timeout: .seconds(5)) as UInt8 == 1)
        try await peripheral.disconnect()
        await host.shutdown()
        await simulator.shutdown()
    }
}

private extension Result where Failure == BluejayError {
    var isTimedOut: Bool {
        if case .failure(.timedOut) = self { return true }
        return false
    }
}
