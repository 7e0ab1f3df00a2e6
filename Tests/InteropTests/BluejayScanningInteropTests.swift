import Bluejay
import Foundation
import Synchronization
import Testing

/// The Bluejay API against a Bumble peripheral. Serialized: timing-sensitive tests (expiry,
/// timeouts) must not compete with each other for the two cores of a CI machine.
extension InteropSuites {
    @Suite("Bluejay against Bumble")
    struct BluejayInteropTests {}
}

extension InteropSuites.BluejayInteropTests {
    @Suite("Scanning (README: Basic Scanning, Scan Action, Monitoring)")
    struct Scanning {
        @Test("Basic scanning: discoveries for the heart-rate service, each with its advertisement, then stopped without error")
        func basicScanning() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                let seen = Collected<ScanDiscovery>()
                let stopped = Mutex<(discoveries: [ScanDiscovery], error: BluejayError?)?>(nil)
                bluejay.scan(
                    serviceIdentifiers: [Peer.heartRateService],
                    discovery: { discovery, discoveries in
                        seen.append(discovery)
                        #expect(discoveries.contains { $0.peripheralIdentifier == discovery.peripheralIdentifier })
                        return .continue
                    },
                    stopped: { discoveries, error in stopped.withLock { $0 = (discoveries, error) } })
                #expect(bluejay.isScanning)

                // Only one scan at a time.
                let second: ([ScanDiscovery], BluejayError?) = try await callback { done in
                    bluejay.scan(serviceIdentifiers: nil, discovery: { _, _ in .continue }, stopped: { done(($0, $1)) })
                }
                #expect(second.1 == .multipleScanNotSupported)

                try await waitUntil("a discovery") { seen.count >= 1 }
                try await Task.sleep(for: .milliseconds(500))
                bluejay.stopScanning()
                try await waitUntil("stopped") { stopped.withLock { $0 } != nil }
                let result = try #require(stopped.withLock { $0 })
                #expect(result.error == nil, "stopped on purpose: no error")
                #expect(seen.count == 1, "without duplicates the peripheral is reported once: \(seen.all)")
                let discovery = try #require(result.discoveries.first)
                #expect(discovery.peripheralIdentifier == peer)
                #expect(discovery.localName == "Bluejay Peer", "the scan response is merged in")
                #expect(discovery.rssi == -50)
                #expect(discovery.serviceIdentifiers.contains(Peer.heartRateService))
                #expect(discovery.manufacturerData == Data([0xFF, 0xFF, 1, 2, 3, 4]))
                #expect(discovery.serviceData[Peer.batteryService] == Data([87]))
                #expect(!bluejay.isScanning)
            }
        }

        @Test("ScanAction.stop ends the scan at once, without error")
        func stopAction() async throws {
            try await withBluejay { _, bluejay in
                let calls = Collected<String>()
                let stopped: ([ScanDiscovery], BluejayError?) = try await callback { done in
                    bluejay.scan(serviceIdentifiers: [Peer.heartRateService],
                                 discovery: { discovery, _ in
                                     calls.append(discovery.peripheralIdentifier.stringValue)
                                     return .stop
                                 },
                                 stopped: { done(($0, $1)) })
                }
                #expect(stopped.1 == nil)
                #expect(stopped.0.count == 1)
                #expect(calls.count == 1)
                #expect(!bluejay.isScanning)
            }
        }

        @Test("ScanAction.blacklist ignores a peripheral for the rest of the scan, also with duplicates")
        func blacklistAction() async throws {
            // The scan's 2 s are simulated: they pass when the test has seen what it waits for.
            let clock = ManualClock()
            try await withBluejay(peripherals: 2, clock: .manual(clock)) { rig, bluejay in
                let ignored = try rig.peripheral(1).identifier()
                let other = try rig.peripheral(2).identifier()
                let reports = Collected<PeripheralIdentifier>()
                let stopped = Mutex<([ScanDiscovery], BluejayError?)?>(nil)
                bluejay.scan(duration: 2, allowDuplicates: true, throttleRSSIDelta: 0, serviceIdentifiers: [Peer.heartRateService],
                             discovery: { discovery, _ in
                                 reports.append(discovery.peripheralIdentifier)
                                 return discovery.peripheralIdentifier == ignored ? .blacklist : .continue
                             },
                             stopped: { discoveries, error in stopped.withLock { $0 = (discoveries, error) } })
                try await waitUntil("both heard, the other again and again") {
                    reports.all.contains(ignored) && reports.all.filter { $0 == other }.count >= 6
                }
                #expect(bluejay.isScanning, "no simulated time has passed")
                clock.advance(by: .seconds(2))
                try await waitUntil("the end of the scan") { stopped.withLock { $0 } != nil }
                #expect(stopped.withLock { $0?.1 } == nil, "the duration ended it")
                #expect(reports.all.filter { $0 == ignored }.count == 1, "blacklisted after its first report")
            }
        }

        @Test("ScanAction.connect stops the scan, then connects before anything else queued")
        func connectAction() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                let order = Collected<String>()
                let connected: ConnectionResult = try await callback(timeout: .seconds(20)) { done in
                    bluejay.scan(serviceIdentifiers: [Peer.heartRateService],
                                 discovery: { discovery, _ in
                                     .connect(discovery, .seconds(15), WarningOptions(notifyOnConnection: false, notifyOnDisconnection: true)) { result in
                                         order.append("connected")
                                         done(result)
                                     }
                                 },
                                 stopped: { _, error in order.append("stopped \(error.map { "\($0)" } ?? "without error")") })
                }
                #expect(connected == .success(peer))
                #expect(order.all == ["stopped without error", "connected"])
                #expect(bluejay.isConnected && !bluejay.isScanning)
                try await rig.waitForEvent(named: "connected")
            }
        }

        @Test("Monitoring: with duplicates, a peripheral that stops advertising is reported expired within the estimate")
        func monitoringWithExpiry() async throws {
            // Bluejay's time is simulated: advertisements arrive in real time from the peer, and
            // the test moves the clock 100 ms per round, once it has heard from the peripherals
            // that advertise. A stalled peer only makes a round longer, never a peripheral expire.
            // (The estimate itself is checked exactly in ScanTrackerTests.)
            let clock = ManualClock()
            try await withBluejay(peripherals: 2, clock: .manual(clock)) { rig, bluejay in
                let staying = try rig.peripheral(1).identifier()
                let leaving = try rig.peripheral(2).identifier()
                let heard = Collected<(id: PeripheralIdentifier, at: Duration)>()
                let expired = Collected<(ScanDiscovery, [PeripheralIdentifier], Duration)>()
                let scanEnd = Mutex<BluejayError??>(nil)
                bluejay.scan(
                    duration: 60, allowDuplicates: true, throttleRSSIDelta: 0, serviceIdentifiers: nil,
                    discovery: { discovery, _ in
                        heard.append((discovery.peripheralIdentifier, clock.now))
                        return .continue
                    },
                    expired: { lost, discoveries in
                        expired.append((lost, discoveries.map(\.peripheralIdentifier), clock.now))
                        return .continue
                    },
                    stopped: { _, error in scanEnd.withLock { $0 = .some(error) } })
                /// Moves time by 100 ms once each of `peripherals` was heard again.
                func round(hearing peripherals: [PeripheralIdentifier]) async throws {
                    let before = heard.count
                    try await waitUntil("\(peripherals) heard again") {
                        let since = heard.all.dropFirst(before)
                        return peripherals.allSatisfy { id in since.contains { $0.id == id } }
                    }
                    clock.advance(by: .milliseconds(100))
                }
                // Both heard every 100 ms for a second: the estimate is 4 × 100 ms, at least 2 s.
                for _ in 0..<10 { try await round(hearing: [staying, leaving]) }
                // The leaving one was last heard in the round that ended at `stopped`, or later.
                let stopped = clock.now
                try await rig.request(.stopAdvertising(peripheral: 2))
                #expect(expired.count == 0)
                var rounds = 0
                while expired.count == 0, rounds < 40 {
                    try await round(hearing: [staying])
                    rounds += 1
                }
                let (lost, remaining, when) = try #require(expired.all.first, "no expiry within \(rounds) rounds of 100 ms")
                #expect(lost.peripheralIdentifier == leaving)
                #expect(remaining == [staying], "the discoveries left")
                // Not before its last advertisement (at `stopped` - 100 ms at the earliest) plus the 2 s estimate.
                #expect(when - stopped >= .milliseconds(1900), "expired \(when - stopped) after it stopped advertising")
                // The one that keeps advertising never expires.
                for _ in 0..<25 { try await round(hearing: [staying]) }
                #expect(expired.count == 1, "the peripheral that keeps advertising never expires")
                bluejay.stopScanning()
                try await waitUntil("stopped") { scanEnd.withLock { $0 } != nil }
                #expect(scanEnd.withLock { $0 } == .some(nil))
            }
        }
    }
}
