@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// The whole Bluejay engine against a peripheral of our own stack on a virtual link: fast,
/// no Python. The README examples against Bumble are in the interop tests.
@Suite("Bluejay on a virtual link", .timeLimit(.minutes(2)))
struct EngineTests {
    @Test("Before start every request fails with notStarted, and nothing traps")
    func notStarted() async throws {
        let bluejay = Bluejay()
        let read: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(read == .failure(.notStarted))
        let connect: ConnectionResult = try await callback { done in
            bluejay.connect(PeripheralIdentifier(address: DeviceAddress(.zero, type: .public))) { done($0) }
        }
        #expect(connect == .failure(.notStarted))
        #expect(!bluejay.hasStarted)
        #expect(throws: BluejayError.notStarted) { try bluejay.readRSSI() }
    }

    @Test("A controller that cannot be opened makes queued requests fail with bluetoothUnavailable")
    func unavailable() async throws {
        let bluejay = Bluejay()
        let log = EventLog()
        bluejay.register(connectionObserver: log)
        bluejay.start(mode: .new(StartOptions(transport: .specification("tcp:127.0.0.1:1"))))
        #expect(bluejay.hasStarted)
        let connect: ConnectionResult = try await callback { done in
            bluejay.connect(PeripheralIdentifier(address: DeviceAddress(.zero, type: .public))) { done($0) }
        }
        guard case .failure(.bluetoothUnavailable) = connect else {
            Issue.record("expected bluetoothUnavailable, got \(connect)")
            return
        }
        await #expect(throws: BluejayError.self) { try await bluejay.waitUntilReady() }
        #expect(!bluejay.isBluetoothAvailable)
        #expect(!bluejay.isBluetoothStateUpdateImminent)
        try await waitUntil("observer told") { log.all.contains("available false") }
        await bluejay.stop()
    }

    @Test("Connect, read, write, read back, listen: the heart-rate basics, with observers")
    func basics() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:01")
        let bluejay = try await startBluejay(on: link)
        let log = EventLog()
        bluejay.register(connectionObserver: log)
        try await waitUntil("availability told on registration") { log.all == ["available true"] }

        let connected: ConnectionResult = try await callback { done in
            bluejay.connect(peripheral.identifier, timeout: .seconds(10)) { done($0) }
        }
        #expect(connected == .success(peripheral.identifier))
        #expect(bluejay.isConnected && !bluejay.isConnecting)
        #expect((bluejay.attMTU ?? 0) > 23, "the MTU was exchanged: \(String(describing: bluejay.attMTU))")
        #expect(bluejay.maximumWriteValueLength(for: .withoutResponse) == (bluejay.attMTU ?? 0) - 3)
        try await waitUntil("connected told") { log.all.contains("connected \(peripheral.identifier.address)") }

        let location: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(location == .success(1))
        let written: WriteResult = try await callback { done in bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(2)) { done($0) } }
        #expect((try? written.get()) != nil)
        #expect(await peripheral.value(0x2A38) == [2])
        let readBack: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(readBack == .success(2))
        // Signed writes: one PDU less the 12-octet signature, and only where the characteristic
        // has the Authenticated Signed Writes property (0x2A38 has not), before any signing.
        #expect(bluejay.maximumWriteValueLength(for: .signed) == (bluejay.attMTU ?? 0) - 15)
        let signed: WriteResult = try await callback { done in
            bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(3), type: .signed) { done($0) }
        }
        guard case .failure(.notSupported) = signed else {
            Issue.record("a signed write to a characteristic without the property: \(signed)")
            return
        }
        #expect(await peripheral.value(0x2A38) == [2])

        let description: ReadResult<String> = try await callback { done in bluejay.read(from: HeartRate.userDescription) { done($0) } }
        #expect(description == .success("Body Sensor Location"), "descriptors can be read")

        let measurements = Mutex<[Int]>([])
        bluejay.listen(to: HeartRate.measurement, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurementValue>) in
            if case let .success(value) = result { measurements.withLock { $0.append(value.beatsPerMinute) } }
        }
        try await waitUntil("subscribed") { await peripheral.subscriberCount(0x2A37) == 1 }
        #expect(bluejay.isListening(to: HeartRate.measurement))
        try await peripheral.notify(0x2A37, [0x00, 72])
        try await peripheral.notify(0x2A37, [0x01, 0x2C, 0x01])
        try await waitUntil("two measurements") { measurements.withLock { $0 } == [72, 300] }

        let ended: WriteResult = try await callback { done in bluejay.endListen(to: HeartRate.measurement) { done($0) } }
        #expect((try? ended.get()) != nil)
        #expect(!bluejay.isListening(to: HeartRate.measurement))
        try await waitUntil("unsubscribed") { await peripheral.subscriberCount(0x2A37) == 0 }

        let disconnected: DisconnectionResult = try await callback { done in bluejay.disconnect { done($0) } }
        #expect(disconnected == .disconnected(peripheral.identifier))
        #expect(!bluejay.shouldAutoReconnect, "a manual disconnection turns auto-reconnect off")
        try await waitUntil("disconnected told") { log.all.contains("disconnected \(peripheral.identifier.address)") }
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("Requests run in order, one at a time; connecting twice fails at once")
    func fifoAndDoubleConnect() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:02")
        let bluejay = try await startBluejay(on: link)
        let order = Mutex<[String]>([])
        let first: ConnectionResult = try await callback { done in
            bluejay.connect(peripheral.identifier, timeout: .seconds(10)) { result in
                order.withLock { $0.append("connected") }
                done(result)
            }
            // Queued behind the connection: they run after it, in this order.
            for value in [UInt8(3), 4, 5] {
                bluejay.write(to: HeartRate.bodySensorLocation, value: value) { _ in order.withLock { $0.append("write \(value)") } }
                bluejay.read(from: HeartRate.bodySensorLocation) { (result: ReadResult<UInt8>) in
                    order.withLock { $0.append("read \((try? result.get()).map(String.init) ?? "error")") }
                }
            }
        }
        #expect((try? first.get()) != nil)
        let second: ConnectionResult = try await callback { done in bluejay.connect(peripheral.identifier) { done($0) } }
        #expect(second == .failure(.alreadyConnected(peripheral.identifier)))
        try await waitUntil("six results") { order.withLock { $0.count } == 7 }
        #expect(order.withLock { $0 } == ["connected", "write 3", "read 3", "write 4", "read 4", "write 5", "read 5"])
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("An immediate disconnect fails every queued request with cancelled")
    func immediateDisconnect() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:03")
        let bluejay = try await startBluejay(on: link)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let results = Mutex<[ReadResult<UInt8>]>([])
        for _ in 0..<5 {
            bluejay.read(from: HeartRate.bodySensorLocation) { (result: ReadResult<UInt8>) in results.withLock { $0.append(result) } }
        }
        let disconnected: DisconnectionResult = try await callback { done in bluejay.disconnect(immediate: true) { done($0) } }
        #expect(disconnected == .disconnected(peripheral.identifier))
        try await waitUntil("five results") { results.withLock { $0.count } == 5 }
        let failures = results.withLock { $0 }.filter { $0 == .failure(.cancelled) }.count
        #expect(failures >= 4, "at most the running read finished: \(results.withLock { $0 })")
        #expect(!bluejay.isConnected)
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("The regular API inside or during a background task is a typed error, never a deadlock")
    func backgroundTaskMisuse() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:04")
        let bluejay = try await startBluejay(on: link)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let inside = Mutex<ReadResult<UInt8>?>(nil)
        let release = DispatchSemaphore(value: 0)
        let result: RunResult<UInt8> = try await callback { done in
            bluejay.run(backgroundTask: { synchronized -> UInt8 in
                bluejay.read(from: HeartRate.bodySensorLocation) { (result: ReadResult<UInt8>) in inside.withLock { $0 = result } }
                release.wait()
                try synchronized.write(to: HeartRate.bodySensorLocation, value: UInt8(6))
                return try synchronized.read(from: HeartRate.bodySensorLocation)
            }, completionOnMainThread: { done($0) })
            bluejay.read(from: HeartRate.bodySensorLocation) { (outside: ReadResult<UInt8>) in
                #expect(outside == .failure(.backgroundTaskRunning))
                release.signal()
            }
        }
        #expect((try? result.get()) == 6)
        try await waitUntil("inside result") { inside.withLock { $0 } != nil }
        #expect(inside.withLock { $0 } == .failure(.regularAPIInBackgroundTask("read 2A38 in 180D")))
        let after: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(after == .success(6), "the regular API works again once the task ended")
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("A background task's requests complete while the app holds its callback queue (only completions need it)")
    func backgroundTaskDoesNotWaitForTheCallbackQueue() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:42")
        let queue = DispatchQueue(label: "held")
        let bluejay = try await startBluejay(on: link) { $0.callbackQueue = queue }
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))

        // The app holds its callback queue until the background task has read (or 10 s pass).
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let readWhileHeld = Mutex<Bool?>(nil)
        queue.async {
            holding.signal()
            readWhileHeld.withLock { $0 = held.wait(timeout: .now() + 10) == .success }
        }
        holding.wait()
        let result: RunResult<UInt8> = try await callback(timeout: .seconds(20)) { done in
            bluejay.run(backgroundTask: { synchronized -> UInt8 in
                defer { held.signal() }
                return try synchronized.read(from: HeartRate.bodySensorLocation)
            }, completionOnMainThread: { done($0) })
        }
        #expect((try? result.get()) == 1)
        #expect(readWhileHeld.withLock { $0 } == true, "the read completed while the callback queue was held")
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("A background task without a connection fails with notConnected; a disconnection makes a blocked call throw")
    func backgroundTaskFailures() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:05")
        let bluejay = try await startBluejay(on: link)
        let early: RunResult<Void> = try await callback { done in bluejay.run(backgroundTask: { _ in }, completionOnMainThread: { done($0) }) }
        guard case let .failure(earlyError as BluejayError) = early else {
            Issue.record("expected notConnected, got \(early)")
            return
        }
        #expect(earlyError == .notConnected)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let blocked: RunResult<Void> = try await callback { done in
            bluejay.run(backgroundTask: { synchronized in
                try synchronized.listen(to: HeartRate.measurement) { (_: UInt8) in .keepListening }
            }, completionOnMainThread: { done($0) })
            Task {
                try await waitUntil("subscribed") { await peripheral.subscriberCount(0x2A37) == 1 }
                await peripheral.disconnectAll()
            }
        }
        guard case let .failure(error as BluejayError) = blocked, case .disconnected = error else {
            Issue.record("expected a disconnection error, got \(blocked)")
            return
        }
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("The async API: connect, read, write, listen as a stream, cancellation of a queued request")
    func asyncAPI() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:06")
        let bluejay = try await startBluejay(on: link)
        let events = bluejay.connectionEvents()
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .connected(peripheral.identifier))
        try await bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(4))
        let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
        #expect(location == 4)
        let rssi = try await bluejay.rssi()
        #expect(rssi < 0)

        let reader = Task {
            // The stream lives only in this task, as in `for try await x in try await bluejay.listen(...)`.
            let stream: ValueStream<HeartRateMeasurementValue> = try await bluejay.listen(to: HeartRate.measurement)
            var values: [Int] = []
            for try await measurement in stream {
                values.append(measurement.beatsPerMinute)
                if values.count == 3 { break }
            }
            return values
        }
        try await waitUntil("subscribed") { await peripheral.subscriberCount(0x2A37) == 1 }
        try await waitUntil("listening") { bluejay.isListening(to: HeartRate.measurement) }
        for rate in [UInt8(60), 61, 62] { try await peripheral.notify(0x2A37, [0x00, rate]) }
        #expect(try await reader.value == [60, 61, 62])
        try await waitUntil("the listen ended with the iteration") { !bluejay.isListening(to: HeartRate.measurement) }
        try await waitUntil("unsubscribed") { await peripheral.subscriberCount(0x2A37) == 0 }

        // A request queued behind a slow one, cancelled through its task, never runs.
        let blocker = Task { try await bluejay.read(from: HeartRate.slow) as UInt8 }
        try await peripheral.slowAnswers.waitForArrivals(1)
        let victim = Task { try await bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(9)) }
        try await waitUntil("the write queued") { bluejay.runner.count == 2 }
        victim.cancel()
        await #expect(throws: BluejayError.cancelled) { try await victim.value }
        peripheral.slowAnswers.open()
        #expect(try await blocker.value == 0x5A)
        let unchanged: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
        #expect(unchanged == 4)

        try await bluejay.disconnect()
        #expect(await iterator.next() == .disconnected(peripheral.identifier, error: nil, willReconnect: false))
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("Auto-reconnect after the peripheral drops the link; listens are enabled again")
    func autoReconnect() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:07")
        let bluejay = try await startBluejay(on: link)
        let log = EventLog()
        bluejay.register(connectionObserver: log)
        bluejay.registerDisconnectHandler(handler: log)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let values = Mutex<[UInt8]>([])
        bluejay.listen(to: HeartRate.batteryLevel) { (result: ReadResult<UInt8>) in
            if case let .success(value) = result { values.withLock { $0.append(value) } }
        }
        try await waitUntil("subscribed") { await peripheral.subscriberCount(0x2A19) == 1 }
        // Queued after the listen: once it is done, so is the listen's set-up.
        let _: UInt8 = try await bluejay.read(from: HeartRate.batteryLevel)
        await peripheral.disconnectAll()
        try await waitUntil("reconnected") { log.count("connected") == 2 && bluejay.isConnected }
        #expect(log.all.contains("handler unexpected willReconnect=true"))
        try await waitUntil("subscribed again") { await peripheral.subscriberCount(0x2A19) == 1 }
        try await peripheral.notify(0x2A19, [42])
        try await waitUntil("value after reconnection") { values.withLock { $0 } == [42] }

        log.reconnectAnswer.withLock { $0 = .change(shouldAutoReconnect: false) }
        await peripheral.disconnectAll()
        try await waitUntil("handler asked again") { log.count("handler") == 2 }
        try await Task.sleep(for: .milliseconds(500))
        #expect(!bluejay.isConnected && !bluejay.isConnecting, "the handler turned auto-reconnect off")
        #expect(!bluejay.shouldAutoReconnect)
        #expect(!bluejay.isListening(to: HeartRate.batteryLevel), "no reconnection: the listens ended")
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("Several peripherals at once with BluejayCentral, each with its own queue")
    func severalPeripherals() async throws {
        let link = VirtualLink()
        let left = try await VirtualPeripheral.start(on: link, name: "Left", address: "D0:00:00:00:00:08")
        let right = try await VirtualPeripheral.start(on: link, name: "Right", address: "D0:00:00:00:00:09")
        let controller = link.addController(name: "central", address: try #require(BluetoothAddress("C0:00:00:00:00:02")))
        let central = try await BluejayCentral.open(.transport(controller.makeTransport()), operationTimeout: .seconds(30))
        var found: Set<PeripheralIdentifier> = []
        for try await event in central.scan(serviceIdentifiers: [HeartRate.service]) {
            found.insert(event.discovery.peripheralIdentifier)
            if found.isSuperset(of: [left.identifier, right.identifier]) { break }
        }
        let first = try await central.connect(left.identifier, timeout: .seconds(10))
        let second = try await central.connect(right.identifier, timeout: .seconds(10))
        #expect(central.peripherals.count == 2)
        async let writeLeft: Void = first.write(to: HeartRate.bodySensorLocation, value: UInt8(3))
        async let writeRight: Void = second.write(to: HeartRate.bodySensorLocation, value: UInt8(5))
        _ = try await (writeLeft, writeRight)
        #expect(await left.value(0x2A38) == [3])
        #expect(await right.value(0x2A38) == [5])
        let stream: ValueStream<UInt8> = try await second.listen(to: HeartRate.batteryLevel)
        try await right.notify(0x2A19, [11])
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == 11)
        try await first.disconnect()
        #expect(!first.isConnected && second.isConnected)
        await #expect(throws: BluejayError.self) { try await first.read(from: HeartRate.bodySensorLocation) as UInt8 }
        await central.shutdown()
        await left.shutdown()
        await right.shutdown()
    }

    @Test("stopAndExtractBluetoothState hands the host and the connection over; .use takes them back")
    func extractAndUse() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:0A")
        let bluejay = try await startBluejay(on: link)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let (host, connection) = bluejay.stopAndExtractBluetoothState()
        #expect(!bluejay.hasStarted)
        let extractedHost = try #require(host)
        let extracted = try #require(connection)
        #expect(extracted.isConnected, "handing over does not disconnect")
        let afterStop: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(afterStop == .failure(.notStarted))

        let second = Bluejay()
        second.start(mode: .use(host: extractedHost, peripheral: extracted, options: StartOptions(operationTimeout: .seconds(30))))
        try await second.waitUntilReady()
        try await waitUntil("the connection is adopted") { second.isConnected }
        let location: UInt8 = try await second.read(from: HeartRate.bodySensorLocation)
        #expect(location == 1)
        await second.stop()
        #expect(!extracted.isConnected, "stop disconnects")
        await extractedHost.shutdown()
        await peripheral.shutdown()
    }
}

/// A heart rate measurement as the README models it.
struct HeartRateMeasurementValue: Receivable, Sendable {
    let beatsPerMinute: Int

    init(bluetoothData: Data) throws {
        let flags: UInt8 = try bluetoothData.extract(start: 0, length: 1)
        beatsPerMinute = flags & 0x01 == 0
            ? Int(try bluetoothData.extract(start: 1, length: 1) as UInt8)
            : Int(try bluetoothData.extract(start: 1, length: 2) as UInt16)
    }
}
