import Bluejay
import Foundation
import Synchronization
import Testing

/// The README's authentication result codes.
enum AuthResponse: UInt8 {
    case success = 0x01
    case failure = 0x02
}

/// What the rig's UART sends back for `A5 LL LL`: LL bytes, byte i being i % 256. Modelled
/// the way the README models a firmware version of known length.
struct FirmwareBlob: Receivable, Sendable {
    static let length = 1500
    let bytes: [UInt8]

    init(bluetoothData: Data) throws {
        guard bluetoothData.count == Self.length else {
            throw BluejayError.deserializationFailed(type: "FirmwareBlob", data: bluetoothData, reason: "expected \(Self.length) bytes")
        }
        bytes = Array(bluetoothData)
    }
}

/// The request the UART answers with a long value (see `peer.py`).
struct LongAnswerRequest: Transmittable {
    let length: UInt16
    func toBluetoothData() -> Data { Bluejay.combine(sendables: [UInt8(0xA5), length]) }
}

extension InteropSuites.BluejayInteropTests {
    @Suite("Background tasks (README: Batch Operations, Background Task, Write and Assemble, Flush Listen, Connect by Serial Number)")
    struct Background {
        static let uartTXUUID = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
        @Test("The background reset task: end listen, write, read, all blocking; then monitoring resumes")
        func resetTask() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let monitored = Collected<Int>()
                let startMonitoringHeartRate: @Sendable () -> Void = {
                    bluejay.listen(to: Peer.heartRate, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
                        if case let .success(heartRate) = result { monitored.append(heartRate.measurement) }
                    }
                }
                startMonitoringHeartRate()
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }
                let during = Mutex<ReadResult<UInt8>?>(nil)
                let steps = Collected<String>()
                let result: RunResult<UInt8> = try await callback(timeout: .seconds(20)) { done in
                    bluejay.run(backgroundTask: { peripheral -> UInt8 in
                        steps.append("Reset step 1: stop monitoring.")
                        try peripheral.endListen(to: Peer.heartRate)
                        steps.append("Reset step 2: set sensor location to 0.")
                        try peripheral.write(to: Peer.bodySensorLocation, value: UInt8(0))
                        steps.append("Reset step 3: read sensor location.")
                        let sensorLocation = try peripheral.read(from: Peer.bodySensorLocation) as UInt8
                        steps.append("Reset step 4: return sensor location.")
                        return sensorLocation
                    }, completionOnMainThread: { result in
                        if case .success = result { startMonitoringHeartRate() }
                        done(result)
                    })
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in during.withLock { $0 = result } }
                }
                #expect((try? result.get()) == 0)
                #expect(steps.count == 4)
                #expect(during.withLock { $0 } == .failure(.backgroundTaskRunning), "the regular API is refused while the task runs")
                let off = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" }
                #expect(off.bool("notify") == false, "step 1 turned the notifications off")
                let written = try await rig.waitForEvent(named: "written")
                #expect(written.bytes("value") == [0])
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }
                try await rig.request(.notify(uuid: "2A37", count: 1, value: [0x00, 64]))
                try await waitUntil("monitoring resumed") { monitored.all == [64] }
            }
        }

        @Test("Connect by serial number over two advertising devices, keeping our own blacklist across scans")
        func connectBySerialNumber() async throws {
            try await withBluejay(peripherals: 2) { rig, bluejay in
                let target = try rig.peripheral(2)
                // The target starts advertising only after the other device was examined, so
                // that the flow always goes through a mismatch, a blacklist and a second scan.
                try await rig.request(.stopAdvertising(peripheral: 2))
                let finder = SerialNumberFinder(bluejay: bluejay, targetSerialNumber: target.serial)
                finder.scan(services: [Peer.heartRateService])
                try await waitUntil("the first device examined", timeout: .seconds(20)) { finder.blacklistedDiscoveries.withLock { $0.count } == 1 }
                // The second scan meets the first device again and blacklists it with its own list.
                try await waitUntil("the blacklist used", timeout: .seconds(20)) { finder.blacklistReturns.withLock { $0 } >= 1 }
                try await rig.request(.startAdvertising(peripheral: 2))
                try await waitUntil("the device with serial number \(target.serial)", timeout: .seconds(40)) { finder.status.withLock { $0 } != "Searching..." }
                #expect(finder.status.withLock { $0 } == "Connected")
                #expect(bluejay.connectedPeripheral == (try target.identifier()))
                let serial: ReadResult<String> = try await callback { done in bluejay.read(from: Peer.serialNumber) { done($0) } }
                #expect(serial == .success(target.serial))
                let mismatches = finder.blacklistedDiscoveries.withLock { $0 }
                #expect(mismatches.map(\.peripheralIdentifier) == [try rig.peripheral(1).identifier()])
                #expect(finder.scans.withLock { $0 } == 2)
                #expect(finder.blacklistReturns.withLock { $0 } >= 1, "the second scan met the first device again and blacklisted it")
            }
        }

        @Test("The two-password authentication: flush, end listen, then write-and-listen on each characteristic")
        func twoPasswordAuthentication() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let enteredPassword: String? = "open sesame"
                let flushes = Collected<String>()
                let result: RunResult<(Bool, Bool)> = try await callback(timeout: .seconds(40)) { done in
                    bluejay.run(backgroundTask: { peripheral -> (Bool, Bool) in
                        var isUserAuthenticated = false
                        var isAdminAuthenticated = false
                        // 1. No need to perform any Bluetooth tasks if there's no password to try.
                        guard let password = enteredPassword else { return (false, false) }
                        // 2. Flush auth characteristics in case they are still broadcasting unwanted data.
                        try peripheral.flushListen(to: Peer.userAuth, nonZeroTimeout: .seconds(1)) { flushes.append("user") }
                        try peripheral.flushListen(to: Peer.adminAuth, nonZeroTimeout: .seconds(1)) { flushes.append("admin") }
                        // 3. Sanity checks, making sure the characteristics are not broadcasting anymore.
                        try peripheral.endListen(to: Peer.userAuth)
                        try peripheral.endListen(to: Peer.adminAuth)
                        // 4. Attempt authentication.
                        if let passwordData = password.data(using: .utf8) {
                            try peripheral.writeAndListen(writeTo: Peer.userAuth, value: passwordData, listenTo: Peer.userAuth,
                                                          timeoutInSeconds: .seconds(15)) { (response: UInt8) -> ListenAction in
                                if let responseCode = AuthResponse(rawValue: response) { isUserAuthenticated = responseCode == .success }
                                return .done
                            }
                            try peripheral.writeAndListen(writeTo: Peer.adminAuth, value: passwordData, listenTo: Peer.adminAuth,
                                                          timeoutInSeconds: .seconds(15)) { (response: UInt8) -> ListenAction in
                                if let responseCode = AuthResponse(rawValue: response) { isAdminAuthenticated = responseCode == .success }
                                return .done
                            }
                        }
                        // 5. Return results of authentication.
                        return (isUserAuthenticated, isAdminAuthenticated)
                    }, completionOnMainThread: { done($0) })
                }
                let (user, admin) = try result.get()
                #expect(user && !admin, "the password is the user's, not the admin's")
                #expect(flushes.all == ["user", "admin"])
                // The rig reports each answer; the second line may still be on its way.
                let first = try await rig.waitForEvent(named: "auth_answered")
                let second = try await rig.waitForEvent(named: "auth_answered")
                #expect([first.bool("accepted"), second.bool("accepted")] == [true, false])
            }
        }

        @Test("writeAndAssemble joins an answer cut into notifications of random sizes")
        func writeAndAssemble() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                try await rig.request(.uartMode(.random, seed: 7))
                let result: RunResult<[UInt8]> = try await callback(timeout: .seconds(30)) { done in
                    bluejay.run(backgroundTask: { peripheral -> [UInt8] in
                        var firmware: [UInt8] = []
                        try peripheral.writeAndAssemble(
                            writeTo: Peer.uartRX, value: LongAnswerRequest(length: UInt16(FirmwareBlob.length)),
                            listenTo: Peer.uartTX, expectedLength: FirmwareBlob.length, timeoutInSeconds: .seconds(15)
                        ) { (blob: FirmwareBlob) -> ListenAction in
                            firmware = blob.bytes
                            return .done
                        }
                        return firmware
                    }, completionOnMainThread: { done($0) })
                }
                #expect(try result.get() == (0..<FirmwareBlob.length).map { UInt8($0 % 256) })
                let answered = try await rig.waitForEvent(named: "uart_answered")
                let chunks = answered["chunks"]?.arrayValue?.compactMap(\.intValue) ?? []
                #expect(chunks.reduce(0, +) == FirmwareBlob.length)
                #expect(chunks.count > 1 && Set(chunks).count > 1, "random sizes: \(chunks)")
            }
        }

        @Test("flushListen drops values for as long as they keep coming, then ends the listen")
        func flushListen() async throws {
            // Bluejay's time is simulated: the idle window passes only when the test moves the
            // clock, after the peer sent every value, however long it took to start and send them.
            let clock = ManualClock()
            try await withBluejay(clock: .manual(clock)) { rig, bluejay in
                let recorder = Recorder()
                bluejay.register(logObserver: recorder)
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                // Every notification the host receives, counted beside Bluejay's own delivery.
                let notifications = try #require(await bluejay.host?.connections.first?.gatt.notifications())
                let received = Mutex(0)
                let counter = Task { for await _ in notifications { received.withLock { $0 += 1 } } }
                defer { counter.cancel() }
                let flushed = Mutex<Duration?>(nil)
                let finished = AwaitableLog<RunResult<Void>>()
                bluejay.run(backgroundTask: { peripheral in
                    try peripheral.flushListen(to: Peer.uartTX, nonZeroTimeout: .seconds(1)) {
                        flushed.withLock { $0 = clock.now }
                    }
                }, completionOnMainThread: { finished.append($0) })
                // The module resumes streaming what it had not sent: 50 values.
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == Self.uartTXUUID && $0.bool("notify") == true }
                try await rig.request(.stream(uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", count: 50, intervalMilliseconds: 50))
                let streamedEvent = try await rig.waitForEvent(named: "streamed")
                #expect(streamedEvent.int("count") == 50)
                try await waitUntil("the host received the 50 values") { received.withLock { $0 } >= 50 }
                #expect(flushed.withLock { $0 } == nil, "no simulated time passed: the flush goes on")
                // Move time in 100 ms steps until the flush ends (a value still on its way
                // when a step is taken restarts the window from that step).
                var steps = 0
                while flushed.withLock({ $0 }) == nil, steps < 40 {
                    clock.advance(by: .milliseconds(100))
                    steps += 1
                    _ = await finished.wait(forCount: 1, timeout: .milliseconds(20))
                }
                let result = try #require(await finished.wait(forCount: 1, timeout: .seconds(30))?.first, "the flush did not end")
                #expect((try? result.get()) != nil, "\(result)")
                let end = try #require(flushed.withLock { $0 })
                #expect(end >= .seconds(1), "at least the idle window after the first value: \(end)")
                try await waitUntil("the flush's log line") { recorder.logLines.all.contains { $0.hasPrefix("flushed ") } }
                #expect(recorder.logLines.all.contains("flushed 50 value(s) from \(Peer.uartTX)"), "every value dropped: \(recorder.logLines.all)")
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == Self.uartTXUUID && $0.bool("notify") == false }
                #expect(!bluejay.isListening(to: Peer.uartTX))

                let indefinite: RunResult<Void> = try await callback { done in
                    bluejay.run(backgroundTask: { peripheral in
                        try peripheral.flushListen(to: Peer.uartTX, nonZeroTimeout: .none) {}
                    }, completionOnMainThread: { done($0) })
                }
                guard case let .failure(error as BluejayError) = indefinite else {
                    Issue.record("expected indefiniteFlush, got \(indefinite)")
                    return
                }
                #expect(error == .indefiniteFlush)
            }
        }

        @Test("A synchronous listen with a timeout throws timedOut and turns its notifications off")
        func synchronousListenTimeout() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let started = ContinuousClock.now
                let result: RunResult<Void> = try await callback { done in
                    bluejay.run(backgroundTask: { peripheral in
                        try peripheral.listen(to: Peer.heartRate, timeout: .seconds(1)) { (_: HeartRateMeasurement) in .keepListening }
                    }, completionOnMainThread: { done($0) })
                }
                guard case let .failure(error as BluejayError) = result, case .timedOut = error else {
                    Issue.record("expected timedOut, got \(result)")
                    return
                }
                #expect(started.duration(to: .now) >= .seconds(1))
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == false }
            }
        }
    }
}

/// The README's connect-by-serial-number flow, as an app object would hold it.
final class SerialNumberFinder: Sendable {
    let bluejay: Bluejay
    let targetSerialNumber: String
    let blacklistedDiscoveries = Mutex<[ScanDiscovery]>([])
    let status = Mutex("Searching...")
    let scans = Mutex(0)
    let blacklistReturns = Mutex(0)

    init(bluejay: Bluejay, targetSerialNumber: String) {
        self.bluejay = bluejay
        self.targetSerialNumber = targetSerialNumber
    }

    func scan(services: [ServiceIdentifier]) {
        scans.withLock { $0 += 1 }
        status.withLock { $0 = "Searching..." }
        bluejay.scan(
            allowDuplicates: false,
            serviceIdentifiers: services,
            discovery: { [weak self] discovery, _ -> ScanAction in
                guard let self else { return .stop }
                if self.blacklistedDiscoveries.withLock({ $0.contains { $0.peripheralIdentifier == discovery.peripheralIdentifier } }) {
                    self.blacklistReturns.withLock { $0 += 1 }
                    return .blacklist
                }
                return .connect(discovery, .none, WarningOptions(notifyOnConnection: false, notifyOnDisconnection: true, notifyOnNotification: false)) { [weak self] connectionResult in
                    guard let self else { return }
                    switch connectionResult {
                    case .success:
                        self.bluejay.read(from: Peer.serialNumber) { [weak self] (readResult: ReadResult<String>) in
                            guard let self else { return }
                            switch readResult {
                            case let .success(serialNumber):
                                if serialNumber == self.targetSerialNumber {
                                    self.status.withLock { $0 = "Connected" }
                                } else {
                                    self.blacklistedDiscoveries.withLock { $0.append(discovery) }
                                    self.bluejay.disconnect { [weak self] result in
                                        switch result {
                                        case .disconnected: self?.scan(services: services)
                                        case let .failure(error): self?.status.withLock { $0 = "Disconnect Error: \(error)" }
                                        }
                                    }
                                }
                            case let .failure(error):
                                self.status.withLock { $0 = "Read Error: \(error.localizedDescription)" }
                            }
                        }
                    case let .failure(error):
                        self.status.withLock { $0 = "Connection Error: \(error.localizedDescription)" }
                    }
                }
            },
            stopped: { [weak self] _, error in
                if let error { self?.status.withLock { $0 = "Scan Error: \(error.localizedDescription)" } }
            })
    }
}
