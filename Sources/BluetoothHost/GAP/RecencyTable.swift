import DequeModule

/// A dictionary that knows which of its keys was touched least recently, for state kept per
/// peer that must stay bounded (scan state keyed by address): every operation is O(1),
/// amortized, however many keys come and go.
///
/// The recency order is a queue of touches: touching a key appends it with a new generation
/// number, and the entry it had further up the queue goes stale (its generation no longer
/// matches). Stale touches are skipped when the least recent key is looked for, and the queue
/// is compacted once they outnumber the live ones, so it never holds more than about twice
/// as many touches as the table has keys.
public struct RecencyTable<Key: Hashable, Value> {
    fileprivate struct Entry {
        var value: Value
        var generation: UInt64
    }

    private var entries: [Key: Entry] = [:]
    private var order: Deque<(key: Key, generation: UInt64)> = []
    private var nextGeneration: UInt64 = 0
    /// How many queue entries the table has stepped over (stale touches skipped, touches
    /// copied by a compaction): the work beyond one step per call, for tests that check
    /// that each operation is O(1) amortized.
    public private(set) var visits = 0

    public init() {}

    /// How many keys the table holds.
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// The key's value, without touching it.
    public subscript(key: Key) -> Value? {
        entries[key]?.value
    }

    /// Sets the key's value and makes it the most recent key.
    public mutating func touch(_ key: Key, value: Value) {
        nextGeneration &+= 1
        entries[key] = Entry(value: value, generation: nextGeneration)
        order.append((key, nextGeneration))
        compactIfNeeded()
    }

    /// Changes the key's value in place without touching it; `nil` when the key is absent.
    @discardableResult
    public mutating func modify<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = entries.index(forKey: key) else { return nil }
        return try body(&entries.values[index].value)
    }

    /// Removes the key; its place in the queue goes stale.
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let removed = entries.removeValue(forKey: key)?.value
        if removed != nil { compactIfNeeded() }
        return removed
    }

    /// The least recently touched key and its value, if any.
    public mutating func leastRecent() -> (key: Key, value: Value)? {
        while let first = order.first {
            if let entry = entries[first.key], entry.generation == first.generation { return (first.key, entry.value) }
            order.removeFirst()
            visits += 1
        }
        return nil
    }

    /// Removes and returns the least recently touched key and its value, if any.
    @discardableResult
    public mutating func removeLeastRecent() -> (key: Key, value: Value)? {
        guard let least = leastRecent() else { return nil }
        order.removeFirst()
        entries[least.key] = nil
        return least
    }

    /// Every key and value, in no particular order.
    public var keysAndValues: some Sequence<(key: Key, value: Value)> {
        entries.lazy.map { ($0.key, $0.value.value) }
    }

    /// Empties the table.
    public mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
    }

    /// Drops the stale touches once they outnumber the live ones (plus some slack, so that a
    /// small table is not compacted at every touch): the copy is paid for by the touches that
    /// went stale since the last one.
    private mutating func compactIfNeeded() {
        guard order.count > 2 * entries.count + 32 else { return }
        visits += order.count
        order = Deque(order.lazy.filter { [entries] in entries[$0.key]?.generation == $0.generation })
    }
}

extension RecencyTable: Sendable where Key: Sendable, Value: Sendable {}
extension RecencyTable.Entry: Sendable where Key: Sendable, Value: Sendable {}
