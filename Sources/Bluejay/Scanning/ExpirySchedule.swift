import BluetoothCore
import BluetoothHost

/// When to look at each peripheral of a scan again, to see whether it has expired: a timing
/// wheel of slots one `resolution` wide (the scan's tick). Adding is O(1); taking what came
/// due costs one step per entry taken and per slot passed (or per slot held, after a long
/// jump of time), never one per peripheral tracked.
///
/// The schedule holds identifiers only. Its owner says which entry is current (the slot it
/// last scheduled a peripheral in); entries that are not are stale and skipped. Stale
/// entries come from peripherals rescheduled earlier or forgotten; ``needsRebuild(liveCount:)``
/// tells when they outnumber the live ones.
struct ExpirySchedule: Sendable {
    /// A slot: time since the clock's origin, in `resolution` units.
    typealias Slot = Int64

    private let resolution: Int64
    private var slots: [Slot: [PeripheralIdentifier]] = [:]
    /// Slots before this one have been taken.
    private var firstUntaken: Slot?
    /// How many entries the slots hold, stale ones included.
    private(set) var count = 0
    /// Steps taken beyond one per entry added (slots passed, entries taken), for the test
    /// that the scan's work per report is O(1), amortized.
    private(set) var visits = 0

    init(resolution: Duration) {
        self.resolution = Swift.max(1, Self.nanoseconds(resolution))
    }

    /// The first slot that starts at or after `instant`: an entry there is looked at no
    /// earlier than `instant`.
    func slot(atOrAfter instant: BluetoothClock.Instant) -> Slot {
        let nanoseconds = Self.nanoseconds(instant.offset)
        let (quotient, remainder) = nanoseconds.quotientAndRemainder(dividingBy: resolution)
        return remainder > 0 ? quotient + 1 : quotient
    }

    /// Schedules `id` at `slot`, or at the first slot not yet taken if `slot` has passed;
    /// returns the slot used.
    @discardableResult
    mutating func add(_ id: PeripheralIdentifier, at slot: Slot) -> Slot {
        let used = firstUntaken.map { Swift.max($0, slot) } ?? slot
        slots[used, default: []].append(id)
        count += 1
        return used
    }

    /// Removes and returns the entries of every slot that has started by `now`.
    mutating func takeDue(at now: BluetoothClock.Instant) -> [(slot: Slot, id: PeripheralIdentifier)] {
        let (quotient, remainder) = Self.nanoseconds(now.offset).quotientAndRemainder(dividingBy: resolution)
        let last = remainder < 0 ? quotient - 1 : quotient
        defer { firstUntaken = Swift.max(firstUntaken ?? last + 1, last + 1) }
        guard !slots.isEmpty else { return [] }
        var due: [Slot] = []
        if let first = firstUntaken, first <= last, last - first < Slot(slots.count) {
            // The usual case, a tick after the previous one: step through the slots passed.
            visits += Int(last - first + 1)
            due = (first...last).filter { slots[$0] != nil }
        } else {
            // A long jump of time (or the first take): look at the slots held instead.
            visits += slots.count
            due = slots.keys.filter { $0 <= last }.sorted()
        }
        var entries: [(slot: Slot, id: PeripheralIdentifier)] = []
        for slot in due {
            guard let ids = slots.removeValue(forKey: slot) else { continue }
            visits += ids.count
            count -= ids.count
            entries += ids.lazy.map { (slot, $0) }
        }
        return entries
    }

    /// Empties the schedule (before its owner adds the live entries again).
    mutating func removeAll() {
        visits += count
        slots.removeAll()
        count = 0
    }

    /// Whether stale entries outnumber the `liveCount` live ones (plus some slack), so that
    /// rebuilding the schedule is paid for by the entries that went stale since.
    func needsRebuild(liveCount: Int) -> Bool {
        count > 2 * liveCount + 32
    }

    /// A duration in nanoseconds, saturating far beyond any scan.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflow, !sumOverflow else { return seconds < 0 ? .min / 2 : .max / 2 }
        return sum
    }
}
