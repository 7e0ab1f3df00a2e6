@testable import Bluejay
import BluetoothCore
import BluetoothHost
import Testing

/// Reproducible random numbers (SplitMix64).
private struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` distinct random static addresses (the two top bits set, Core 6.0, Vol 6, Part B, 1.3.2.1).
private func randomAddresses(_ count: Int, seed: UInt64) -> [DeviceAddress] {
    var random = SeededRandom(state: seed)
    var seen: Set<DeviceAddress> = []
    var addresses: [DeviceAddress] = []
    while addresses.count < count {
        let bits = random.next()
        var bytes = (0..<6).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) }
        bytes[0] |= 0xC0
        let address = DeviceAddress(BluetoothAddress(bytes: bytes) ?? .zero, type: .random)
        if seen.insert(address).inserted { addresses.append(address) }
    }
    return addresses
}

private let flags = AdvertisingData([.flags(.leGeneralDiscoverableMode)])
private let name = AdvertisingData([.completeLocalName("P")])

private func advertisement(_ peer: DeviceAddress, rssi: Int8 = -60, scannable: Bool = false, scanResponse: Bool = false) -> Advertisement {
    Advertisement(peer: peer, rssi: rssi, isConnectable: true, isScannable: scannable, advertisingData: flags,
                  scanResponse: scanResponse ? name : nil)
}

/// A tracker fed on simulated time: a ``ManualClock`` that the test advances, a tick per
/// tick interval as ``ScanSession`` runs it, and every event kept.
private struct Rig {
    let clock = ManualClock()
    var tracker: ScanTracker
    var discovered: [PeripheralIdentifier: Int] = [:]
    var expired: [PeripheralIdentifier: Int] = [:]
    var reports = 0

    init(_ configuration: ScanTracker.Configuration) {
        tracker = ScanTracker(configuration: configuration)
        clock.advance(by: .seconds(100))
    }

    var now: BluetoothClock.Instant { BluetoothClock.manual(clock).now }

    /// One report. Every 256 it lets other tasks run: these tests share the test process's
    /// few threads with tests that wait on the wall clock.
    mutating func hear(_ advertisement: Advertisement) async {
        var events: [ScanEvent] = []
        tracker.receive(advertisement, at: now, into: &events)
        reports += 1
        record(events)
        if reports % 256 == 0 { await Task.yield() }
    }

    /// Advances the clock by `duration`, ticking at every tick interval on the way.
    mutating func pass(_ duration: Duration) async {
        let end = clock.now + duration
        while clock.now < end {
            clock.advance(by: min(tracker.configuration.tickInterval, end - clock.now))
            record(tracker.tick(at: now))
            await Task.yield()
        }
    }

    private mutating func record(_ events: [ScanEvent]) {
        for event in events {
            switch event {
            case let .discovered(discovery): discovered[discovery.peripheralIdentifier, default: 0] += 1
            case let .expired(discovery): expired[discovery.peripheralIdentifier, default: 0] += 1
            }
        }
    }
}

@Suite("Scan bookkeeping: bounded, O(1) per report", .timeLimit(.minutes(2)))
struct ScanTrackerLimitTests {
    static let addresses = randomAddresses(10_000, seed: 10)

    @Test("10,000 random addresses: all tracked, and those that go silent expire on time, the rest stay")
    func tenThousandExpire() async {
        var rig = Rig(.init(allowDuplicates: true, throttleRSSIDelta: 100, active: false))
        let peers = Self.addresses
        // Everyone advertises every 500 ms, 100 ms of simulated time per 2,000 reports.
        for round in 0..<2 {
            for (index, peer) in peers.enumerated() {
                await rig.hear(advertisement(peer))
                if index % 2_000 == 1_999 { await rig.pass(.milliseconds(100)) }
            }
            #expect(rig.tracker.trackedCount == 10_000, "round \(round)")
        }
        #expect(rig.discovered.count == 10_000)
        #expect(rig.discovered.values.allSatisfy { $0 == 1 }, "the throttle holds back repeats")
        #expect(rig.expired.isEmpty, "nobody silent yet")
        #expect(rig.tracker.discoveries.count == 10_000)

        // The first half stops. Their longest gap is 500 ms, so they expire 2 s after they were
        // last heard (4 × 500 ms = 2 s, the floor); the second half keeps advertising.
        let silent = Set(peers.prefix(5_000).map { PeripheralIdentifier(address: $0) })
        for _ in 0..<5 {
            for peer in peers.suffix(5_000) { await rig.hear(advertisement(peer)) }
            await rig.pass(.milliseconds(500))
        }
        #expect(Set(rig.expired.keys) == silent, "exactly the silent half expired")
        #expect(rig.expired.values.allSatisfy { $0 == 1 })
        #expect(rig.tracker.trackedCount == 5_000)
        #expect(Set(rig.tracker.discoveries.map(\.peripheralIdentifier)) == Set(peers.suffix(5_000).map { PeripheralIdentifier(address: $0) }))

        // Then everyone stops: nothing is left after the longest possible estimate.
        await rig.pass(.seconds(31))
        #expect(rig.expired.count == 10_000)
        #expect(rig.tracker.trackedCount == 0)
        #expect(rig.tracker.discoveries.isEmpty)
        #expect(rig.tracker.forgotten.tracked == 0, "nothing forgotten below the limit")
    }

    @Test("An expiry is reported at the tick where its estimate runs out")
    func expiryOnTime() async {
        var rig = Rig(.init(allowDuplicates: true, throttleRSSIDelta: 100, active: false))
        let peer = Self.addresses[0]
        let id = PeripheralIdentifier(address: peer)
        for _ in 0..<5 {
            await rig.hear(advertisement(peer))
            await rig.pass(.milliseconds(1_000))
        }
        // Gaps of 1 s: 4 s after the last report.
        let deadline = rig.tracker.expiryDeadline(of: id)
        #expect(deadline == rig.now + .seconds(3))
        await rig.pass(.milliseconds(2_900))
        #expect(rig.expired.isEmpty)
        await rig.pass(.milliseconds(100))
        #expect(rig.expired[id] == 1)
    }

    @Test("A peripheral whose estimate shrinks is looked at earlier than its check was scheduled")
    func shrinkingEstimate() async {
        var rig = Rig(.init(allowDuplicates: true, throttleRSSIDelta: 100, active: false, expiry: .init(window: 2)))
        let peer = Self.addresses[0]
        let id = PeripheralIdentifier(address: peer)
        await rig.hear(advertisement(peer))
        await rig.pass(.seconds(7))
        await rig.hear(advertisement(peer))
        // A gap of 7 s: an estimate of 28 s, so the check after the first (at 10 s) moves to 35 s.
        await rig.pass(.milliseconds(3_500))
        await rig.hear(advertisement(peer))
        // Then fast: once two 100 ms gaps fill the window, the estimate is 2 s (the floor).
        for _ in 0..<2 {
            await rig.pass(.milliseconds(100))
            await rig.hear(advertisement(peer))
        }
        await rig.pass(.milliseconds(1_900))
        #expect(rig.expired.isEmpty)
        await rig.pass(.milliseconds(100))
        #expect(rig.expired[id] == 1, "expired 2 s after the last report, not at the check 35 s after the first")
    }

    @Test("Past the limit the least recently heard are forgotten, counted, and reported expired")
    func limitEvictsLeastRecentlyHeard() async {
        var rig = Rig(.init(allowDuplicates: true, throttleRSSIDelta: 100, active: false, peripheralLimit: 1_000))
        let peers = Self.addresses
        for (index, peer) in peers.enumerated() {
            await rig.hear(advertisement(peer))
            #expect(rig.tracker.trackedCount <= 1_000)
            #expect(rig.tracker.discoveries.count <= 1_000)
            if index % 500 == 499 { await rig.pass(.milliseconds(100)) }
        }
        let forgotten = rig.tracker.forgotten.tracked
        #expect(forgotten + rig.tracker.trackedCount == 10_000)
        #expect(rig.tracker.trackedCount >= 1_000 - 1_000 / 16, "one batch at a time")
        #expect(rig.expired.count == forgotten, "each forgotten discovery is reported expired, once")
        #expect(rig.expired.values.allSatisfy { $0 == 1 })
        let kept = Set(rig.tracker.discoveries.map(\.peripheralIdentifier))
        #expect(kept == Set(peers.suffix(rig.tracker.trackedCount).map { PeripheralIdentifier(address: $0) }),
                "the most recently heard are kept")
        #expect(rig.tracker.discoveries.map(\.peripheralIdentifier) == peers.suffix(rig.tracker.trackedCount).map {
            PeripheralIdentifier(address: $0)
        }, "in order of discovery")
        // A forgotten peripheral heard again is a new discovery.
        let first = PeripheralIdentifier(address: peers[0])
        await rig.hear(advertisement(peers[0]))
        #expect(rig.discovered[first] == 2)
    }

    @Test("Without duplicates the limit bounds a flood too, silently; the default limit holds 10,000 and more")
    func limitWithoutDuplicates() async {
        #expect(ScanTracker.Configuration().peripheralLimit == 16_384)
        var rig = Rig(.init(allowDuplicates: false, active: false, peripheralLimit: 500))
        for peer in Self.addresses.prefix(3_000) { await rig.hear(advertisement(peer)) }
        #expect(rig.tracker.trackedCount <= 500)
        #expect(rig.tracker.discoveries.count == rig.tracker.trackedCount)
        #expect(rig.tracker.forgotten.tracked == 3_000 - rig.tracker.trackedCount)
        #expect(rig.expired.isEmpty, "no expiry without duplicates")
    }

    @Test("Held peripherals and the blacklist are bounded too")
    func heldAndBlacklistBounded() async {
        var rig = Rig(.init(allowDuplicates: false, active: true, peripheralLimit: 500))
        let peers = Array(Self.addresses.prefix(3_000))
        for peer in peers { await rig.hear(advertisement(peer, scannable: true)) }
        #expect(rig.tracker.trackedCount <= 500, "held for their scan response, within the limit")
        #expect(rig.discovered.isEmpty)
        await rig.pass(.milliseconds(600))
        #expect(rig.discovered.count == rig.tracker.trackedCount, "the held ones still tracked are released")
        for peer in peers { rig.tracker.blacklist(PeripheralIdentifier(address: peer)) }
        #expect(rig.tracker.blacklistedCount == 500)
        #expect(rig.tracker.forgotten.blacklisted == 2_500)
        #expect(rig.tracker.isBlacklisted(PeripheralIdentifier(address: peers[2_999])), "the most recent are kept")
        #expect(!rig.tracker.isBlacklisted(PeripheralIdentifier(address: peers[0])))
    }

    // MARK: Work per report

    /// The tracker's work beyond a fixed amount per call, per report, for `count` peripherals
    /// heard `rounds` times each in random order, ticking every 1,000 reports.
    private func workPerReport(peripherals count: Int, rounds: Int, _ configuration: ScanTracker.Configuration) async -> Double {
        var rig = Rig(configuration)
        let peers = Array(Self.addresses.prefix(count))
        var random = SeededRandom(state: UInt64(count))
        let before = rig.tracker.visits
        for _ in 0..<rounds {
            for peer in peers.shuffled(using: &random) {
                await rig.hear(advertisement(peer, rssi: Int8.random(in: -90 ... -40, using: &random)))
                if rig.reports % 1_000 == 0 { await rig.pass(.milliseconds(100)) }
            }
        }
        return Double(rig.tracker.visits - before) / Double(rig.reports)
    }

    @Test("A report costs O(1) amortized, for 1,000 as for 10,000 peripherals")
    func constantWorkPerReport() async {
        let configuration = ScanTracker.Configuration(allowDuplicates: true, throttleRSSIDelta: 5, active: false)
        let small = await workPerReport(peripherals: 1_000, rounds: 8, configuration)
        let large = await workPerReport(peripherals: 10_000, rounds: 3, configuration)
        #expect(small < 4, "work per report with 1,000 peripherals: \(small)")
        #expect(large < 4, "work per report with 10,000 peripherals: \(large)")
    }

    @Test("A tick costs what comes due, not a step per peripheral tracked")
    func tickCostsWhatIsDue() async {
        var rig = Rig(.init(allowDuplicates: true, throttleRSSIDelta: 100, active: false))
        for peer in Self.addresses { await rig.hear(advertisement(peer)) }
        let before = rig.tracker.visits
        await rig.pass(.seconds(1))
        #expect(rig.tracker.visits - before <= 10, "10 ticks with nothing due: \(rig.tracker.visits - before) steps")
    }

    @Test("A scan response releases its held peripheral in O(1), however many are held")
    func scanResponsesInO1() async {
        var rig = Rig(.init(allowDuplicates: false, active: true))
        let peers = Array(Self.addresses.prefix(5_000))
        for peer in peers { await rig.hear(advertisement(peer, scannable: true)) }
        let before = rig.tracker.visits
        for peer in peers.reversed() { await rig.hear(advertisement(peer, scannable: true, scanResponse: true)) }
        #expect(rig.discovered.count == 5_000)
        #expect(rig.tracker.visits - before < 2 * 5_000, "\(rig.tracker.visits - before) steps for 5,000 scan responses")
        let beforeTick = rig.tracker.visits
        await rig.pass(.milliseconds(600))
        #expect(rig.discovered.values.allSatisfy { $0 == 1 }, "a released peripheral is not released again")
        #expect(rig.tracker.visits - beforeTick <= 5_000 + 10, "each held deadline is looked at once")
    }

    @Test("A flood of new addresses at the limit costs O(1) per report, amortized")
    func floodAtTheLimit() async {
        var rig = Rig(.init(allowDuplicates: true, throttleRSSIDelta: 100, active: false, peripheralLimit: 1_000))
        for peer in Self.addresses.prefix(1_000) { await rig.hear(advertisement(peer)) }
        let before = rig.tracker.visits
        let reportsBefore = rig.reports
        for (index, peer) in Self.addresses.dropFirst(1_000).prefix(5_000).enumerated() {
            await rig.hear(advertisement(peer))
            if index % 1_000 == 999 { await rig.pass(.milliseconds(100)) }
        }
        let perReport = Double(rig.tracker.visits - before) / Double(rig.reports - reportsBefore)
        #expect(perReport < 40, "work per report at the limit: \(perReport)")
    }
}
