import BluetoothCore
import BluetoothHost

/// The bookkeeping of one scan, without I/O or clock: which peripherals were found, which
/// are blacklisted, the RSSI throttle, waiting for scan responses, and the estimate of when
/// a peripheral is gone. ``Bluejay`` feeds it advertisements and the time.
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
            guard let longest = recentGaps.max() else { return initial }
            return min(max(longest * factor, minimum), maximum)
        }
    }

    enum Event: Sendable {
        case discovered(ScanDiscovery)
        case expired(ScanDiscovery)
    }

    private struct Sighting: Sendable {
        var lastSeen: BluetoothClock.Instant
        var gaps: [Duration] = []
    }

    let configuration: Configuration
    /// Every peripheral found and not expired, in order of discovery.
    private(set) var discoveries: [ScanDiscovery] = []
    /// Where each peripheral of ``discoveries`` is (a scan looks one up per report).
    private var discoveryIndex: [PeripheralIdentifier: Int] = [:]
    private var sightings: [PeripheralIdentifier: Sighting] = [:]
    private var blacklisted: Set<PeripheralIdentifier> = []
    private var held: [PeripheralIdentifier: (discovery: ScanDiscovery, deadline: BluetoothClock.Instant)] = [:]
    private var heldOrder: [PeripheralIdentifier] = []

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// An advertisement (merged with its scan response, as the host assembles it). Returns
    /// the discovery to report now, if any.
    mutating func receive(_ advertisement: Advertisement, at now: BluetoothClock.Instant) -> ScanDiscovery? {
        let discovery = ScanDiscovery(advertisement: advertisement)
        let id = discovery.peripheralIdentifier
        guard !blacklisted.contains(id) else { return nil }
        recordSighting(of: id, at: now)

        if let index = discoveryIndex[id] {
            let previous = discoveries[index]
            var updated = discovery
            guard configuration.allowDuplicates, abs(discovery.rssi - previous.rssi) >= max(0, configuration.throttleRSSIDelta) else {
                // Keep the freshest data, but the RSSI of the last report (the throttle's reference).
                updated.rssi = previous.rssi
                discoveries[index] = updated
                return nil
            }
            discoveries[index] = updated
            return updated
        }
        if held[id] != nil {
            if advertisement.scanResponse != nil { return release(id, as: discovery) }
            held[id]?.discovery = discovery
            return nil
        }
        if configuration.active, advertisement.isScannable, advertisement.scanResponse == nil {
            held[id] = (discovery, now + configuration.scanResponseWait)
            heldOrder.append(id)
            return nil
        }
        append(discovery)
        return discovery
    }

    /// What the passing of time reports: held discoveries whose scan response did not come,
    /// and (with duplicates allowed) peripherals not heard for longer than their estimate.
    mutating func tick(at now: BluetoothClock.Instant) -> [Event] {
        var events: [Event] = []
        for id in heldOrder {
            guard let entry = held[id], entry.deadline <= now else { continue }
            if let discovery = release(id, as: entry.discovery) { events.append(.discovered(discovery)) }
        }
        guard configuration.allowDuplicates else { return events }
        var expired: Set<PeripheralIdentifier> = []
        for discovery in discoveries {
            let id = discovery.peripheralIdentifier
            guard let deadline = expiryDeadline(of: id), deadline <= now else { continue }
            expired.insert(id)
            sightings[id] = nil
            events.append(.expired(discovery))
        }
        if !expired.isEmpty {
            discoveries.removeAll { expired.contains($0.peripheralIdentifier) }
            discoveryIndex = Dictionary(uniqueKeysWithValues: discoveries.enumerated().map { ($1.peripheralIdentifier, $0) })
        }
        return events
    }

    /// Ignores the peripheral for the rest of the scan.
    mutating func blacklist(_ id: PeripheralIdentifier) {
        blacklisted.insert(id)
        held[id] = nil
        heldOrder.removeAll { $0 == id }
    }

    func isBlacklisted(_ id: PeripheralIdentifier) -> Bool { blacklisted.contains(id) }

    /// When the peripheral will be reported gone, if it is being tracked.
    func expiryDeadline(of id: PeripheralIdentifier) -> BluetoothClock.Instant? {
        guard let sighting = sightings[id] else { return nil }
        return sighting.lastSeen + configuration.expiry.timeout(recentGaps: sighting.gaps)
    }

    /// The earliest moment ``tick(at:)`` may report something.
    var nextDeadline: BluetoothClock.Instant? {
        var deadlines = held.values.map(\.deadline)
        if configuration.allowDuplicates {
            deadlines += discoveries.compactMap { expiryDeadline(of: $0.peripheralIdentifier) }
        }
        return deadlines.min()
    }

    private mutating func recordSighting(of id: PeripheralIdentifier, at now: BluetoothClock.Instant) {
        guard var sighting = sightings[id] else {
            sightings[id] = Sighting(lastSeen: now)
            return
        }
        let gap = sighting.lastSeen.duration(to: now)
        if gap > .zero {
            sighting.gaps.append(gap)
            if sighting.gaps.count > configuration.expiry.window { sighting.gaps.removeFirst() }
        }
        sighting.lastSeen = now
        sightings[id] = sighting
    }

    private mutating func release(_ id: PeripheralIdentifier, as discovery: ScanDiscovery) -> ScanDiscovery? {
        held[id] = nil
        heldOrder.removeAll { $0 == id }
        guard discoveryIndex[id] == nil else { return nil }
        append(discovery)
        return discovery
    }

    private mutating func append(_ discovery: ScanDiscovery) {
        discoveryIndex[discovery.peripheralIdentifier] = discoveries.count
        discoveries.append(discovery)
    }
}
