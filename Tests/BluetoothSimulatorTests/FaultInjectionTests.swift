@testable import Bluejay
import BluetoothSimulator
import Foundation
import Synchronization
import Testing

/// Each fault ends in a typed error and a consistent state: no request left in the queue,
/// no callback pending, not connected (unless the test reconnects on purpose).
@Suite("Fault injection: link loss, lost and dropped packets, refused connections, range", .timeLimit(.minutes(1)))
struct FaultInjectionTests {
    @Test("The link drops in the middle of a write: the write and the queued read fail with disconnected")
    func linkLossMidWrite() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let log = ObserverLog(answer: .change(shouldAutoReconnect: false))
            bluejay.register(connectionObserver: log)
            bluejay.registerDisconnectHandler(handler: log)
            try await connect(bluejay, to: sensor.device)
            let listenErrors = Collected<BluejayError>()
            bluejay.broadcastErrorsToListeners = true
            bluejay.listen(to: HeartRate.measurement) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .failure(error) = result { listenErrors.append(error) }
            }
            try await waitUntil("the subscription") { await !sensor.device.subscribers(of: "2A37").isEmpty }

            sensor.device.failNextRequests(.dropLink, on: "2A38", kinds: .write)
            let write = AwaitableLog<WriteResult>()
            let read = AwaitableLog<ReadResult<UInt8>>()
            // Both queued before either starts: a write of a known characteristic begins on this
            // thread, and the link could drop, and its loss be handled, before the read is queued.
            bluejay.runner.suspend()
            bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(3)) { write.append($0) }
            bluejay.read(from: HeartRate.batteryLevel) { read.append($0) }
            bluejay.runner.resume()
            let expected = BluejayError.disconnected(sensor.device.peripheralIdentifier, reason: .connectionTimeout)
            let written = await write.wait(forCount: 1, timeout: hangGuard)?.first
            guard case let .failure(error)? = written else {
                Issue.record("expected the write to fail, got \(String(describing: written))")
                return
            }
            #expect(error == expected)
            #expect(await read.wait(forCount: 1, timeout: hangGuard)?.first == .failure(expected))
            try await waitUntil("the disconnect handler") { log.disconnectErrors.count == 1 }
            #expect(log.disconnectErrors == [expected])
            #expect(listenErrors.all == [expected])
            try await waitUntil("the disconnected observer") { log.count("disconnected") == 1 }
            await expectIdle(bluejay, listeningTo: [HeartRate.measurement])
            #expect(!bluejay.shouldAutoReconnect)
            #expect(await sensor.location == .chest, "the write never completed")
            try await waitUntil("the sensor sees the link drop") { sensor.device.connectedCentrals.isEmpty }
        }
    }

    @Test("A refused read or write names its procedure and characteristic in the error, with either API")
    func refusalNamesTheProcedure() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)
            let location = HeartRate.bodySensorLocation
            sensor.device.failNextRequests(.attError(.readNotPermitted), on: "2A38", kinds: .read)
            do {
                let value: UInt8 = try await bluejay.read(from: location)
                Issue.record("the injected failure did not come: read \(value)")
            } catch let BluejayError.attError(code, operation, _) {
                #expect(code == .readNotPermitted && operation == "reading \(location)")
            }
            sensor.device.failNextRequests(.attError(.writeNotPermitted), on: "2A38", kinds: .write)
            let write = AwaitableLog<WriteResult>()
            bluejay.write(to: location, value: UInt8(3)) { write.append($0) }
            guard case let .failure(.attError(code, operation, _))? = await write.wait(forCount: 1, timeout: .seconds(5))?.first else {
                Issue.record("expected the write to be refused")
                return
            }
            #expect(code == .writeNotPermitted && operation == "writing \(location)")
        }
    }

    @Test("Lost packets are retransmitted: notifications arrive late but all of them, in order")
    func lostPacketsRetransmitted() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .counting(from: 100), measurementInterval: .milliseconds(10)))
            try await connect(bluejay, to: sensor.device)
            let rates = Collected<Int>()
            bluejay.listen(to: HeartRate.measurement) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .success(measurement) = result { rates.append(measurement.measurement) }
            }
            try await waitUntil("the first measurements") { rates.count >= 5 }
            #expect(try sensor.device.injectACLFault(.lose(attempts: 4), count: 10, direction: .outgoing) == 1)
            try await waitUntil("forty measurements") { rates.count >= 40 }
            let received = rates.all
            #expect(zip(received, received.dropFirst()).allSatisfy { $1 == $0 + 1 }, "none lost, none reordered: \(received)")

            // A request lost on its way is retransmitted too: it succeeds, later.
            try sensor.device.injectACLFault(.lose(attempts: 8), count: 1, direction: .incoming)
            let start = ContinuousClock.now
            let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
            #expect(location == 1)
            #expect(start.duration(to: .now) >= .milliseconds(8 * 15), "eight retransmissions take eight connection intervals")
            try await bluejay.disconnect()
            await expectIdle(bluejay, listeningTo: [HeartRate.measurement])
        }
    }

    /// On Bluejay's own manual clock: with the real one, a loaded machine's pause of a second
    /// during the connection's MTU exchange was itself an ATT transaction timeout (one stress
    /// run failed in connect with "Connection Terminated By Local Host").
    @Test("A request that vanishes ends in a typed timeout; the ATT transaction timeout then closes the link")
    func droppedRequestTimesOut() async throws {
        let clock = ManualClock()
        try await withSimulator(operationTimeout: 0.5, bluejayClock: .manual(clock), configure: { options in
            options.hostConfiguration.attTransactionTimeout = .seconds(1)
        }) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            let log = ObserverLog(answer: .change(shouldAutoReconnect: false))
            bluejay.registerDisconnectHandler(handler: log)
            try await connect(bluejay, to: sensor.device)
            try sensor.device.injectACLFault(.drop, count: 1, direction: .incoming)
            let start = clock.now
            let reads = AwaitableLog<ReadResult<UInt8>>()
            bluejay.read(from: HeartRate.bodySensorLocation) { (result: ReadResult<UInt8>) in reads.append(result) }
            // The read's limit (0.5 s) is set, and its request's transaction timer (1 s).
            try await waitUntil("the read's limit") { clock.nextDeadline == start + .milliseconds(500) }
            clock.advance(to: start + .milliseconds(500))
            let read = try #require(await reads.wait(forCount: 1)?.first)
            guard case let .failure(.timedOut(operation, after)) = read else {
                Issue.record("expected a timeout, got \(read)")
                return
            }
            #expect(operation.contains("2A38") && after == .milliseconds(500))
            // The request is still outstanding on the bearer: the next one waits behind it and
            // fails when the transaction timeout closes the link.
            bluejay.read(from: HeartRate.batteryLevel) { (result: ReadResult<UInt8>) in reads.append(result) }
            try await waitUntil("the transaction's timer") { clock.nextDeadline == start + .seconds(1) }
            #expect(log.disconnectErrors.isEmpty, "not before the transaction timeout")
            clock.advance(to: start + .seconds(1))
            let next = try #require(await reads.wait(forCount: 2)?.last)
            switch next {
            case .failure(.timedOut), .failure(.peripheralNotResponding), .failure(.disconnected): break
            default: Issue.record("expected the second read to fail, got \(next)")
            }
            try await waitUntil("the disconnection") { log.disconnectErrors.count == 1 }
            guard case .disconnected? = log.disconnectErrors.first ?? nil else {
                Issue.record("expected an unexpected disconnection, got \(log.disconnectErrors)")
                return
            }
            await expectIdle(bluejay)
            try await waitUntil("the sensor sees the link end") { sensor.device.connectedCentrals.isEmpty }
        }
    }

    @Test("A peripheral that ignores connection requests: connectionTimedOut, nothing left connecting; then it accepts")
    func refusedConnection() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: nil))
            try sensor.device.setConnectionAcceptance(.ignore)
            let target = sensor.device.peripheralIdentifier
            let start = ContinuousClock.now
            let result: ConnectionResult = try await callback { done in bluejay.connect(target, timeout: .seconds(0.5)) { done($0) } }
            #expect(result == .failure(.connectionTimedOut(target)))
            #expect(start.duration(to: .now) >= .milliseconds(500))
            await expectIdle(bluejay)
            let central = simulator.centralController()
            try await waitUntil("the controller stops initiating") { !central.isInitiating }
            #expect(central.connectionHandles.isEmpty)

            try sensor.device.setConnectionAcceptance(.failToEstablish)
            let failed: ConnectionResult = try await callback { done in bluejay.connect(target, timeout: .none) { done($0) } }
            #expect(failed == .failure(.connectionFailed(target, .connectionFailedToBeEstablished)))
            await expectIdle(bluejay)

            try sensor.device.setConnectionAcceptance(.accept)
            try await connect(bluejay, to: sensor.device)
            try await bluejay.disconnect()
            await expectIdle(bluejay)
        }
    }

    @Test("Out of range: supervision timeout, disconnected callbacks, pending requests fail, a consistent state")
    func outOfRange() async throws {
        // Ten times faster: the 5 s supervision timeout takes half a second. Bluejay's timers
        // stand still (a manual clock nobody moves): the pending read can only end with the link.
        try await withSimulator(timeScale: 10, bluejayClock: .manual(ManualClock())) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(measurementInterval: .milliseconds(50)))
            let log = ObserverLog(answer: .change(shouldAutoReconnect: false))
            bluejay.register(connectionObserver: log)
            bluejay.registerDisconnectHandler(handler: log)
            try await connect(bluejay, to: sensor.device)
            let received = Collected<Int>()
            bluejay.listen(to: HeartRate.measurement) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .success(measurement) = result { received.append(measurement.measurement) }
            }
            try await waitUntil("measurements") { received.count >= 2 }

            try sensor.device.moveOutOfRange()
            #expect(!sensor.device.isInRange(of: simulator.centralController()))
            let pending: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
            #expect(pending == .failure(.disconnected(sensor.device.peripheralIdentifier, reason: .connectionTimeout)))
            try await waitUntil("the disconnect handler") { log.disconnectErrors.count == 1 }
            #expect(log.disconnectErrors == [.disconnected(sensor.device.peripheralIdentifier, reason: .connectionTimeout)])
            try await waitUntil("the disconnected observer") { log.count("disconnected") == 1 }
            await expectIdle(bluejay, listeningTo: [HeartRate.measurement])
            try await waitUntil("the sensor times out too") { sensor.device.connectedCentrals.isEmpty }
            let afterwards = received.count
            let late: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
            #expect(late == .failure(.notConnected))
            #expect(received.count == afterwards)
        }
    }

    @Test("Out of range and back: Bluejay reconnects on its own and the listen resumes")
    func autoReconnectBackInRange() async throws {
        try await withSimulator(timeScale: 10) { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .counting(from: 60), measurementInterval: .milliseconds(20)))
            let log = ObserverLog()
            bluejay.register(connectionObserver: log)
            let connected = try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .none)
            #expect(connected == sensor.device.peripheralIdentifier)
            let received = Collected<Int>()
            bluejay.listen(to: HeartRate.measurement) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .success(measurement) = result { received.append(measurement.measurement) }
            }
            try await waitUntil("measurements") { received.count >= 3 }

            try sensor.device.moveOutOfRange()
            try await waitUntil("the disconnected observer") { log.count("disconnected") == 1 }
            #expect(bluejay.shouldAutoReconnect)
            try await waitUntil("the reconnection attempt") { bluejay.isConnecting }
            let beforeReturn = received.count

            try sensor.device.moveIntoRange()
            try await waitUntil("the reconnection") { log.count("connected") == 2 && bluejay.isConnected }
            try await waitUntil("measurements after the reconnection") { received.count >= beforeReturn + 5 }
            #expect(bluejay.isListening(to: HeartRate.measurement))
            try await bluejay.disconnect()
            try await waitUntil("the disconnection") { log.count("disconnected") == 2 }
            await expectIdle(bluejay)
            #expect(!bluejay.shouldAutoReconnect)
        }
    }
}
