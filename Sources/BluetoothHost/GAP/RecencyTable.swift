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
///
/// Inlinable, so that it runs specialized for its key and value in the modules that use it
/// (a scan touches it for every report).
public struct RecencyTable<Key: Hashable, Value> {
    @usableFromInline struct Entry {
        @usableFromInline var value: Value
        @usableFromInline var generation: UInt64

        @inlinable init(value: Value, generation: UInt64) {
            self.value = value
            self.generation = generation
        }
    }

    @usableFromInline var entries: [Key: Entry] = [:]
    @usableFromInline var order: Deque<(key: Key, generation: UInt64)> = []
    @usableFromInline var nextGeneration: UInt64 = 0
    /// How many queue entries the table has stepped over (stale touches skipped, touches
    /// copied by a compaction): the work beyond one step per call, for tests that check
    /// that each operation is O(1) amortized.
    @inlinable public var visits: Int { steps }
    @usableFromInline var steps = 0

    @inlinable public init() {}

    /// How many keys the table holds.
    @inlinable public var count: Int { entries.count }
    @inlinable public var isEmpty: Bool { entries.isEmpty }

    /// The key's value, without touching it.
    @inlinable public subscript(key: Key) -> Value? {
        entries[key]?.value
    }

    /// Sets the key's value and makes it the most recent key.
    @inlinable public mutating func touch(_ key: Key, value: Value) {
        nextGeneration &+= 1
        entries[key] = Entry(value: value, generation: nextGeneration)
        order.append((key, nextGeneration))
        compactIfNeeded()
    }

    /// Changes the key's value in place and makes it the most recent key; `nil` when the key
    /// is absent.
    @inlinable @discardableResult
    public mutating func touch<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = entries.index(forKey: key) else { return nil }
        nextGeneration &+= 1
        entries.values[index].generation = nextGeneration
        order.append((key, nextGeneration))
        defer { compactIfNeeded() }
        return try body(&entries.values[index].value)
    }

    /// Changes the key's value in place without touching it; `nil` when the key is absent.
    @inlinable @discardableResult
    public mutating func modify<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let index = entries.index(forKey: key) else { return nil }
        return try body(&entries.values[index].value)
    }

    /// Removes the key; its place in the queue goes stale.
    @inlinable @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let removed = entries.removeValue(forKey: key)?.value
        if removed != nil { compactIfNeeded() }
        return removed
    }

    /// The least recently touched key and its value, if any.
    @inlinable public mutating func leastRecent() -> (key: Key, value: Value)? {
        while let first = order.first {
            if let entry = entries[first.key], entry.generation == first.generation { return (first.key, entry.value) }
            order.removeFirst()
            steps += 1
        }
        return nil
    }

    /// Removes and returns the least recently touched key and its value, if any.
    @inlinable @discardableResult
    public mutating func removeLeastRecent() -> (key: Key, value: Value)? {
        guard let least = leastRecent() else { return nil }
        order.removeFirst()
        entries[least.key] = nil
        return least
    }

    /// Every key and value, in no particular order.
    @inlinable public var keysAndValues: some Sequence<(key: Key, value: Value)> {
        entries.lazy.map { ($0.key, $0.value.value) }
    }

    /// Empties the table.
    @inlinable public mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
    }

    /// Drops the stale touches once they outnumber the live ones (plus some slack, so that a
    /// small table is not compacted at every touch): the copy is paid for by the touches that
    /// went stale since the last one.
    @inlinable mutating func compactIfNeeded() {
        guard order.count > 2 * entries.count + 32 else { return }
        steps += order.count
        order = Deque(order.lazy.filter { [entries] in entries[$0.key]?.generation == $0.generation })
    }
}

extension RecencyTable: Sendable where Key: Sendable, Value: Sendable {}
extension RecencyTable.Entry: Sendable where Key: Sendable, Value: Sendable {}
