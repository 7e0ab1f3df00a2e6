@testable import Bluejay
import BluetoothCore
import BluetoothHost
import Testing

private func address(_ last: UInt8) -> DeviceAddress {
    DeviceAddress(BluetoothAddress(bytes: [0xF0, 0, 0, 0, 0, last]) ?? .zero, type: .random)
}

private func advertisement(_ last: UInt8, rssi: Int8 = -50, scannable: Bool = false, scanResponse: Bool = false) -> Advertisement {
    Advertisement(peer: address(last), rssi: rssi, isConnectable: true, isScannable: scannable,
                  advertisingData: AdvertisingData([.flags(.leGeneralDiscoverableMode)]),
                  scanResponse: scanResponse ? AdvertisingData([.completeLocalName("Peer \(last)")]) : nil)
}

extension ScanTracker {
    /// One report, for tests of a few peripherals (nothing is forgotten): what it discovers.
    mutating func receive(_ advertisement: Advertisement, at now: BluetoothClock.Instant) -> ScanDiscovery? {
        var events: [ScanEvent] = []
        receive(advertisement, at: now, into: &events)
        guard case let .discovered(discovery)? = events.last else { return nil }
        return discovery
    }
}

@Suite("Scan bookkeeping", .timeLimit(.minutes(1)))
struct ScanTrackerTests {
    let start = BluetoothClock.Instant(offset: .seconds(100))

    @Test("Without duplicates each peripheral is reported once")
    func once() {
        var tracker = ScanTracker(configuration: .init(allowDuplicates: false, active: false))
        #expect(tracker.receive(advertisement(1), at: start) != nil)
        #expect(tracker.receive(advertisement(1, rssi: -90), at: start + .seconds(1)) == nil)
        #expect(tracker.receive(advertisement(2), at: start + .seconds(1))?.peripheralIdentifier.address == address(2))
        #expect(tracker.discoveries.count == 2)
        #expect(tracker.tick(at: start + .seconds(60)).isEmpty, "no expiry without duplicates")
    }

    @Test("A scannable advertiser is held until its scan response, so the first report has its name")
    func scanResponse() {
        var tracker = ScanTracker(configuration: .init())
        #expect(tracker.receive(advertisement(1, scannable: true), at: start) == nil)
        let reported = tracker.receive(advertisement(1, scannable: true, scanResponse: true), at: start + .milliseconds(5))
        #expect(reported?.localName == "Peer 1")
        #expect(tracker.receive(advertisement(1, scannable: true, scanResponse: true), at: start + .milliseconds(50)) == nil)
    }

    @Test("A held advertiser whose scan response never comes is reported after the wait")
    func scanResponseTimeout() {
        var tracker = ScanTracker(configuration: .init())
        #expect(tracker.receive(advertisement(1, scannable: true), at: start) == nil)
        #expect(tracker.tick(at: start + .milliseconds(100)).isEmpty)
        #expect(tracker.tick(at: start + .milliseconds(499)).isEmpty)
        let events = tracker.tick(at: start + .milliseconds(500))
        guard case let .discovered(discovery)? = events.first else {
            Issue.record("expected a discovery, got \(events)")
            return
        }
        #expect(discovery.peripheralIdentifier.address == address(1))
        #expect(tracker.tick(at: start + .seconds(1)).isEmpty)
    }

    @Test("With duplicates, a peripheral is reported again only when its RSSI moved by the throttle")
    func throttle() {
        var tracker = ScanTracker(configuration: .init(allowDuplicates: true, throttleRSSIDelta: 5, active: false))
        #expect(tracker.receive(advertisement(1, rssi: -50), at: start) != nil)
        #expect(tracker.receive(advertisement(1, rssi: -53), at: start + .milliseconds(100)) == nil)
        #expect(tracker.receive(advertisement(1, rssi: -54), at: start + .milliseconds(200)) == nil, "compared with the last report, -50")
        #expect(tracker.receive(advertisement(1, rssi: -55), at: start + .milliseconds(300))?.rssi == -55)
        #expect(tracker.receive(advertisement(1, rssi: -55), at: start + .milliseconds(400)) == nil)
        #expect(tracker.discoveries.count == 1)
    }

    @Test("A blacklisted peripheral is ignored for the rest of the scan")
    func blacklist() {
        var tracker = ScanTracker(configuration: .init(allowDuplicates: true, throttleRSSIDelta: 0, active: false))
        #expect(tracker.receive(advertisement(1), at: start) != nil)
        tracker.blacklist(PeripheralIdentifier(address: address(1)))
        #expect(tracker.receive(advertisement(1, rssi: -20), at: start + .seconds(1)) == nil)
        #expect(tracker.isBlacklisted(PeripheralIdentifier(address: address(1))))
    }

    @Test("Expiry follows the advertising interval: the longest recent gap times four, within bounds")
    func expiryEstimate() {
        let estimate = ScanTracker.ExpiryEstimate()
        #expect(estimate.timeout(recentGaps: []) == .seconds(10))
        #expect(estimate.timeout(recentGaps: [.milliseconds(50), .milliseconds(60)]) == .seconds(2), "floor")
        #expect(estimate.timeout(recentGaps: [.seconds(1), .milliseconds(1500)]) == .seconds(6))
        #expect(estimate.timeout(recentGaps: [.seconds(20)]) == .seconds(30), "ceiling")
    }

    @Test("A peripheral that stops advertising expires; one that keeps advertising does not")
    func expiry() {
        var tracker = ScanTracker(configuration: .init(allowDuplicates: true, throttleRSSIDelta: 100, active: false))
        var now = start
        for _ in 0..<20 {
            _ = tracker.receive(advertisement(1), at: now)
            _ = tracker.receive(advertisement(2), at: now)
            now = now + .milliseconds(50)
        }
        // Peripheral 1 stops; 2 goes on for 3 s more.
        for _ in 0..<60 {
            _ = tracker.receive(advertisement(2), at: now)
            now = now + .milliseconds(50)
        }
        let events = tracker.tick(at: now)
        #expect(events.count == 1)
        guard case let .expired(lost)? = events.first else {
            Issue.record("expected an expiry, got \(events)")
            return
        }
        #expect(lost.peripheralIdentifier.address == address(1))
        #expect(tracker.discoveries.map(\.peripheralIdentifier.address) == [address(2)])
        #expect(tracker.receive(advertisement(1), at: now) != nil, "back again: a new discovery")
    }
}
