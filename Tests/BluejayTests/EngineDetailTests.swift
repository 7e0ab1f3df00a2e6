@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Foundation
import Synchronization
import Testing

@Suite("Bluejay details on a virtual link", .timeLimit(.minutes(2)))
struct EngineDetailTests {
    @Test("Every GATT request has a time limit; the queue goes on after it")
    func operationTimeLimit() async throws {
        // Bluejay's time is simulated: the limit passes when the test moves the clock, while
        // the peripheral holds its answer until the test lets it go.
        let clock = ManualClock()
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D1:00:00:00:00:01")
        let bluejay = try await startBluejay(on: link) { options in
            options.operationTimeout = .seconds(0.5)
            options.hostConfiguration.clock = .manual(clock)
        }
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let slow = Task { try await bluejay.read(from: HeartRate.slow) as UInt8 }
        try await peripheral.slowAnswers.waitForArrivals(1)
        clock.advance(by: .milliseconds(499))
        let next = Task { try await bluejay.read(from: HeartRate.bodySensorLocation) as UInt8 }
        clock.advance(by: .milliseconds(1))
        do {
            _ = try await slow.value
            Issue.record("the read did not time out")
        } catch let BluejayError.timedOut(operation, after) {
            // Reported at the limit: the peripheral has not answered yet.
            #expect(operation.contains("FFF1") && after == .milliseconds(500))
        }
        // ATT allows one outstanding request: the abandoned read keeps the bearer until the
        // peripheral answers it (Core 6.0, Vol 3, Part F, 3.3.2), then requests flow again.
        peripheral.slowAnswers.open()
        #expect(try await next.value == 1, "the bearer works again once the slow answer came")
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("The in-process virtual controller: `virtual:NAME` and the default with no BLUEJAY_HCI")
    func inProcessController() async throws {
        let name = "engine-\(UUID().uuidString.prefix(8))"
        let peripheral = try await VirtualPeripheral.start(on: InProcessRadio.link, name: "Radio Sensor",
                                                           address: InProcessRadio.address(for: name + "-peripheral").description)
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .specification("virtual:\(name)"))))
        try await bluejay.waitUntilReady()
        #expect(InProcessRadio.controller(named: name).address == InProcessRadio.address(for: name))
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
        #expect(location == 1)
        await bluejay.stop()
        await peripheral.shutdown()

        let transport = try TransportProvider.environment.open(environment: [:])
        #expect(transport.name == "virtual:bluejay")
        transport.close()
    }

    @Test("writeAndRead, run(userData:), and the RSSI observer")
    func synchronousExtras() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D1:00:00:00:00:02")
        let bluejay = try await startBluejay(on: link)
        let log = EventLog()
        bluejay.register(rssiObserver: log)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let result: RunResult<UInt8> = try await callback { done in
            bluejay.run(userData: UInt8(4), backgroundTask: { synchronized, location -> UInt8 in
                #expect(synchronized.maximumWriteValueLength(for: .withoutResponse) > 20)
                return try synchronized.writeAndRead(writeTo: HeartRate.bodySensorLocation, value: location, readFrom: HeartRate.bodySensorLocation)
            }, completionOnMainThread: { done($0) })
        }
        #expect((try? result.get()) == 4)
        try bluejay.readRSSI()
        try await waitUntil("the RSSI observer") { log.count("rssi") == 1 }
        #expect(!log.all.contains("rssi error"))
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("With broadcastErrorsToListeners, listens hear about a disconnection and about cancelEverything")
    func broadcastErrors() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D1:00:00:00:00:03")
        let bluejay = try await startBluejay(on: link)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let quiet = Collected<ReadResult<UInt8>>()
        bluejay.listen(to: HeartRate.batteryLevel) { (result: ReadResult<UInt8>) in quiet.append(result) }
        let _: UInt8 = try await bluejay.read(from: HeartRate.batteryLevel)
        bluejay.cancelEverything(shouldDisconnect: false)
        // A request's callback comes on the same queue after anything cancelEverything told.
        let after: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.batteryLevel) { done($0) } }
        #expect(after == .success(87))
        #expect(quiet.all.isEmpty, "off by default: listens are not told")

        bluejay.broadcastErrorsToListeners = true
        bluejay.cancelEverything(shouldDisconnect: false)
        try await waitUntil("cancelled told") { quiet.all == [.failure(.cancelled)] }
        await peripheral.disconnectAll()
        try await waitUntil("disconnection told") { quiet.count == 2 }
        guard case .failure(.disconnected) = quiet.all.last else {
            Issue.record("expected a disconnection, got \(quiet.all)")
            return
        }
        try await waitUntil("reconnected and listening again") { await peripheral.subscriberCount(0x2A19) == 1 }
        try await peripheral.notify(0x2A19, [9])
        try await waitUntil("the listen goes on") { quiet.all.last == .success(9) }
        await bluejay.stop()
        await peripheral.shutdown()
    }
}

/// A thread-safe list.
