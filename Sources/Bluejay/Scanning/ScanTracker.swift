import BluetoothCore
import BluetoothHost
import DequeModule

/// The bookkeeping of one scan, without I/O or clock: which peripherals were found, which
/// are blacklisted, the RSSI throttle, waiting for scan responses, and the estimate of when
/// a peripheral is gone. ``Bluejay`` feeds it advertisements and the time.
///
/// Bounded and O(1) per report, amortized, however many peripherals are heard (a crowd, or
/// a peer rotating random addresses): at most ``Configuration/peripheralLimit`` peripherals
/// are tracked, found or waiting for their scan response, and at most as many blacklisted.
/// Lookups are by identifier; the least recently heard peripheral is found through a
/// ``RecencyTable``; expiry checks wait in an ``ExpirySchedule``, so a tick looks only at
/// the peripherals whose time has come. Removing peripherals from ``discoveries`` (which
/// keeps the order of discovery) is one pass over it per tick or per eviction batch.
struct ScanTracker: Sendable {
    struct Configuration: Sendable {
        /// Report a peripheral again each time it is heard (subject to the RSSI throttle).
        var allowDuplicates = false
        /// With duplicates allowed, a peripheral heard again is reported only when its RSSI
        /// moved by at least this much since its last report.
        var throttleRSSIDelta = 5
        /// Active scanning: scannable advertisers are held until their scan response
        /// arrives (or ``scanResponseWait`` passes) so the first report has their name.
        var active = true
        var scanResponseWait: Duration = .milliseconds(500)
        var expiry = ExpiryEstimate()
        /// How many peripherals the scan tracks at once (found, or held for their scan
        /// response), and how many it keeps blacklisted. Past it the least recently heard
        /// are forgotten, a sixteenth of the limit at once (so that ``discoveries`` is
        /// compacted once per batch): with duplicates allowed each forgotten discovery is
        /// reported `expired`; heard again, a peripheral is discovered again. Counted in
        /// ``ScanTracker/forgotten``.
        var peripheralLimit = Bluejay.scanPeripheralLimit
        /// How often ``ScanTracker/tick(at:)`` runs: the resolution of expiry checks.
        var tickInterval: Duration = ScanSession.tickInterval
    }

    /// How long a peripheral may stay silent before it is reported gone: a multiple of the
    /// longest gap recently seen between its advertisements, within bounds. Advertisers
    /// keep a steady interval (Core 6.0, Vol 6, Part B, 4.4.2.2: the interval plus up to
    /// 10 ms of random delay), and a scanner misses some of them, so the longest recent
    /// gap times a safety factor is a sound estimate.
    struct ExpiryEstimate: Sendable {
        var factor: Int = 4
        var minimum: Duration = .seconds(2)
        var maximum: Duration = .seconds(30)
        /// Before a second advertisement gives a gap.
        var initial: Duration = .seconds(10)
        /// How many recent gaps are kept.
        var window = 16

        func timeout(recentGaps: [Duration]) -> Duration {
            timeout(longestGap: recentGaps.max())
        }

        func timeout(longestGap: Duration?) -> Duration {
            guard let longestGap else { return initial }
            return min(max(longestGap * factor, minimum), maximum)
        }
    }

    /// What the tracker knows of one peripheral it heard (small: it is read and written back
    /// at every report).
    private struct Peripheral: Sendable {
        var lastSeen: BluetoothClock.Instant
        /// The recent gaps between its advertisements (with duplicates allowed: expiry).
        var gaps: [Duration] = []
        /// The longest of ``gaps``.
        var longestGap: Duration?
        /// Its place in ``ScanTracker/discoveries``, once found.
        var index: Int?
        /// Held for its scan response until then (its discovery so far is in `heldDiscoveries`).
        var heldUntil: BluetoothClock.Instant?
        /// The slot of the expiry schedule where it is looked at next (found, with duplicates).
        var checkSlot: ExpirySchedule.Slot?

        init(lastSeen: BluetoothClock.Instant) {
            self.lastSeen = lastSeen
        }
    }

    let configuration: Configuration
    /// Every peripheral found and not expired (nor forgotten), in order of discovery.
    private(set) var discoveries: [ScanDiscovery] = []
    /// Every peripheral tracked, found or held, least recently heard first.
    private var peripherals = RecencyTable<PeripheralIdentifier, Peripheral>()
    /// Ignored for the rest of the scan, least recently heard first.
    private var blacklisted = RecencyTable<PeripheralIdentifier, Void>()
    /// The held peripherals' deadlines, in order (all are the same wait after a report).
    private var heldDeadlines: Deque<(id: PeripheralIdentifier, deadline: BluetoothClock.Instant)> = []
    /// The held peripherals' discoveries so far.
    private var heldDiscoveries: [PeripheralIdentifier: ScanDiscovery] = [:]
    private var expiryChecks: ExpirySchedule
    private var compactionVisits = 0
    /// Peripherals forgotten past ``Configuration/peripheralLimit`` (tracked, and blacklisted).
    private(set) var forgotten = (tracked: 0, blacklisted: 0)

    init(configuration: Configuration) {
        self.configuration = configuration
        expiryChecks = ExpirySchedule(resolution: configuration.tickInterval)
    }

    /// How many peripherals are tracked, found or held.
    var trackedCount: Int { peripherals.count }
    /// How many are blacklisted.
    var blacklistedCount: Int { blacklisted.count }

    /// The work done beyond a fixed amount per call: entries skipped or taken from the
    /// queues, slots passed, discoveries moved by a compaction. For the test that a report
    /// costs O(1), amortized, and that a tick costs what comes due, not one step per
    /// peripheral tracked.
    var visits: Int { peripherals.visits + blacklisted.visits + expiryChecks.visits + compactionVisits }

    /// An advertisement (merged with its scan response, as the host assembles it). Appends
    /// what to report now to `events`: the discovery, if any, after any peripherals forgotten
    /// to make room for it (`expired`, with duplicates allowed).
    mutating func receive(_ advertisement: Advertisement, at now: BluetoothClock.Instant, into events: inout [ScanEvent]) {
        let discovery = ScanDiscovery(advertisement: advertisement)
        let id = discovery.peripheralIdentifier
        // After the peripheral's own entry is back in the table.
        defer { rebuildExpiryChecksIfNeeded() }
        if blacklisted[id] != nil {
            blacklisted.touch(id, value: ())
            return
        }
        var peripheral: Peripheral
        var estimateShrank = false
        if let known = peripherals[id] {
            peripheral = known
            if configuration.allowDuplicates { estimateShrank = recordGap(of: &peripheral, to: now) }
            peripheral.lastSeen = now
        } else {
            makeRoom(reporting: &events)
            peripheral = Peripheral(lastSeen: now)
        }

        if let index = peripheral.index {
            let previous = discoveries[index]
            var updated = discovery
            if estimateShrank { scheduleEarlierCheck(of: id, &peripheral) }
            peripherals.touch(id, value: peripheral)
            guard configuration.allowDuplicates, abs(discovery.rssi - previous.rssi) >= max(0, configuration.throttleRSSIDelta) else {
                // Keep the freshest data, but the RSSI of the last report (the throttle's reference).
                updated.rssi = previous.rssi
                discoveries[index] = updated
                return
            }
            discoveries[index] = updated
            events.append(.discovered(updated))
            return
        }
        if peripheral.heldUntil != nil {
            if advertisement.scanResponse != nil {
                peripheral.heldUntil = nil
                heldDiscoveries[id] = nil
                found(id, &peripheral, discovery)
                events.append(.discovered(discovery))
            } else {
                heldDiscoveries[id] = discovery
            }
            peripherals.touch(id, value: peripheral)
            return
        }
        if configuration.active, advertisement.isScannable, advertisement.scanResponse == nil {
            let deadline = now + configuration.scanResponseWait
            peripheral.heldUntil = deadline
            peripherals.touch(id, value: peripheral)
            heldDiscoveries[id] = discovery
            heldDeadlines.append((id, deadline))
            compactHeldDeadlinesIfNeeded()
            return
        }
        found(id, &peripheral, discovery)
        peripherals.touch(id, value: peripheral)
        events.append(.discovered(discovery))
    }

    /// What the passing of time reports: held discoveries whose scan response did not come,
    /// and (with duplicates allowed) peripherals not heard for longer than their estimate.
    mutating func tick(at now: BluetoothClock.Instant) -> [ScanEvent] {
        var events: [ScanEvent] = []
        while let first = heldDeadlines.first, first.deadline <= now {
            heldDeadlines.removeFirst()
            compactionVisits += 1
            guard var peripheral = peripherals[first.id], peripheral.heldUntil == first.deadline,
                  let discovery = heldDiscoveries.removeValue(forKey: first.id) else { continue }
            peripheral.heldUntil = nil
            found(first.id, &peripheral, discovery)
            // Not heard, only released: its place in the recency order stays.
            peripherals.modify(first.id) { $0 = peripheral }
            events.append(.discovered(discovery))
        }
        guard configuration.allowDuplicates else { return events }
        var expired: [Int] = []
        for (slot, id) in expiryChecks.takeDue(at: now) {
            guard let peripheral = peripherals[id], peripheral.checkSlot == slot, let index = peripheral.index else { continue }
            let deadline = peripheral.lastSeen + configuration.expiry.timeout(longestGap: peripheral.longestGap)
            if deadline <= now {
                peripherals.removeValue(forKey: id)
                expired.append(index)
                events.append(.expired(discoveries[index]))
            } else {
                let slot = expiryChecks.add(id, at: expiryChecks.slot(atOrAfter: deadline))
                peripherals.modify(id) { $0.checkSlot = slot }
            }
        }
        removeDiscoveries(at: expired)
        rebuildExpiryChecksIfNeeded()
        return events
    }

    /// Ignores the peripheral for the rest of the scan (or until forgotten past the limit).
    /// A peripheral already found stays in ``discoveries`` until it expires.
    mutating func blacklist(_ id: PeripheralIdentifier) {
        if blacklisted[id] == nil, blacklisted.count >= max(1, configuration.peripheralLimit), blacklisted.removeLeastRecent() != nil {
            forgotten.blacklisted += 1
        }
        blacklisted.touch(id, value: ())
        guard let peripheral = peripherals[id], peripheral.index == nil else { return }
        // Held: let go of it.
        peripherals.removeValue(forKey: id)
        heldDiscoveries[id] = nil
    }

    func isBlacklisted(_ id: PeripheralIdentifier) -> Bool { blacklisted[id] != nil }

    /// When the peripheral will be reported gone, if it is being tracked.
    func expiryDeadline(of id: PeripheralIdentifier) -> BluetoothClock.Instant? {
        guard let peripheral = peripherals[id] else { return nil }
        return peripheral.lastSeen + configuration.expiry.timeout(longestGap: peripheral.longestGap)
    }

    // MARK: Internals

    /// Keeps the gap since the peripheral was last heard; returns whether the estimate may
    /// have shrunk: the first gap replaces the initial estimate, or the longest gap left the
    /// window.
    private func recordGap(of peripheral: inout Peripheral, to now: BluetoothClock.Instant) -> Bool {
        let gap = peripheral.lastSeen.duration(to: now)
        guard gap > .zero else { return false }
        peripheral.gaps.append(gap)
        guard let longest = peripheral.longestGap else {
            peripheral.longestGap = gap
            return true
        }
        if gap > longest { peripheral.longestGap = gap }
        guard peripheral.gaps.count > max(1, configuration.expiry.window) else { return false }
        let left = peripheral.gaps.removeFirst()
        guard left == peripheral.longestGap else { return false }
        peripheral.longestGap = peripheral.gaps.max()
        return peripheral.longestGap != left
    }

    /// Adds a peripheral to ``discoveries``; with duplicates allowed, schedules its expiry check.
    private mutating func found(_ id: PeripheralIdentifier, _ peripheral: inout Peripheral, _ discovery: ScanDiscovery) {
        peripheral.index = discoveries.count
        discoveries.append(discovery)
        guard configuration.allowDuplicates else { return }
        let deadline = peripheral.lastSeen + configuration.expiry.timeout(longestGap: peripheral.longestGap)
        peripheral.checkSlot = expiryChecks.add(id, at: expiryChecks.slot(atOrAfter: deadline))
    }

    /// A found peripheral heard again whose estimate shrank: its check moves earlier if it
    /// would now expire before it. (A later deadline needs nothing: the check finds it and
    /// looks again later.)
    private mutating func scheduleEarlierCheck(of id: PeripheralIdentifier, _ peripheral: inout Peripheral) {
        let deadline = peripheral.lastSeen + configuration.expiry.timeout(longestGap: peripheral.longestGap)
        let slot = expiryChecks.slot(atOrAfter: deadline)
        guard let current = peripheral.checkSlot, slot < current else { return }
        peripheral.checkSlot = expiryChecks.add(id, at: slot)
    }

    /// At the limit, forgets the least recently heard sixteenth of it before a new
    /// peripheral is tracked.
    private mutating func makeRoom(reporting events: inout [ScanEvent]) {
        let limit = max(1, configuration.peripheralLimit)
        guard peripherals.count >= limit else { return }
        var removed: [Int] = []
        for _ in 0..<max(1, limit / 16) {
            guard let (id, peripheral) = peripherals.removeLeastRecent() else { break }
            forgotten.tracked += 1
            if peripheral.heldUntil != nil { heldDiscoveries[id] = nil }
            guard let index = peripheral.index else { continue }
            removed.append(index)
            if configuration.allowDuplicates { events.append(.expired(discoveries[index])) }
        }
        removeDiscoveries(at: removed)
    }

    /// Removes the discoveries at `indexes` (of peripherals no longer tracked) in one pass,
    /// keeping the order of the rest and their peripherals' indexes.
    private mutating func removeDiscoveries(at indexes: [Int]) {
        guard let first = indexes.min() else { return }
        let removed = Set(indexes)
        var write = first
        for read in first..<discoveries.count where !removed.contains(read) {
            if write != read {
                discoveries[write] = discoveries[read]
                let moved = write
                peripherals.modify(discoveries[write].peripheralIdentifier) { $0.index = moved }
            }
            write += 1
        }
        compactionVisits += discoveries.count - first
        discoveries.removeLast(discoveries.count - write)
    }

    private mutating func compactHeldDeadlinesIfNeeded() {
        guard heldDeadlines.count > 2 * heldDiscoveries.count + 32 else { return }
        compactionVisits += heldDeadlines.count
        heldDeadlines = Deque(heldDeadlines.lazy.filter { [peripherals] entry in
            peripherals[entry.id]?.heldUntil == entry.deadline
        })
    }

    /// Once stale checks outnumber the live ones, schedules the live ones afresh. Only when
    /// every peripheral's entry is in the table (not in the middle of a report).
    private mutating func rebuildExpiryChecksIfNeeded() {
        guard expiryChecks.needsRebuild(liveCount: discoveries.count) else { return }
        expiryChecks.removeAll()
        var rescheduled: [(PeripheralIdentifier, ExpirySchedule.Slot)] = []
        for (id, peripheral) in peripherals.keysAndValues {
            guard let slot = peripheral.checkSlot, peripheral.index != nil else { continue }
            rescheduled.append((id, expiryChecks.add(id, at: slot)))
        }
        for (id, slot) in rescheduled { peripherals.modify(id) { $0.checkSlot = slot } }
    }
}
