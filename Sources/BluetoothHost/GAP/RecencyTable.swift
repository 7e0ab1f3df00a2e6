import DequeModule

/// A dictionary that knows which of its keys was touched least recently, for state kept per
/// peer that must stay bounded (scan state keyed by address): every operation is O(1),
/// amortized, however many keys come and go.
///
/// Values live in slots (an array, with a free list), found by key through a dictionary of
/// slot numbers. The recency order is a queue of touches, each naming a slot and the
/// generation the slot had then: touching a key stamps its slot with a new generation and
/// appends it, so the touch it had further up the queue goes stale. Whether a touch is stale
/// is a look at its slot, without hashing or copying a value. Stale touches are skipped when
/// the least recent key is looked for, and the queue is compacted once they outnumber the
/// live ones, so it never holds more than about twice as many touches as the table has keys.
///
/// Inlinable, so that it runs specialized for its key and value in the modules that use it
/// (a scan touches it for every report).
public struct RecencyTable<Key: Hashable, Value> {
    @usableFromInline struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        /// 0 while the slot is free; the generation of the latest touch otherwise.
        @usableFromInline var generation: UInt64

        @inlinable init(key: Key, value: Value, generation: UInt64) {
            self.key = key
            self.value = value
            self.generation = generation
        }
    }

    @usableFromInline var slotOfKey: [Key: Int] = [:]
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var order: Deque<(slot: Int, generation: UInt64)> = []
    @usableFromInline var nextGeneration: UInt64 = 0
    @usableFromInline var steps = 0

    @inlinable public init() {}

    /// How many queue entries the table has stepped over (stale touches skipped, touches
    /// kept by a compaction): the work beyond one step per call, for tests that check that
    /// each operation is O(1) amortized.
    @inlinable public var visits: Int { steps }

    /// How many keys the table holds.
    @inlinable public var count: Int { slotOfKey.count }
    @inlinable public var isEmpty: Bool { slotOfKey.isEmpty }

    /// The key's value, without touching it.
    @inlinable public subscript(key: Key) -> Value? {
        guard let slot = slotOfKey[key] else { return nil }
        return slots[slot].value
    }

    /// Sets the key's value and makes it the most recent key.
    @inlinable public mutating func touch(_ key: Key, value: Value) {
        let generation = makeGeneration()
        if let slot = slotOfKey[key] {
            slots[slot].value = value
            slots[slot].generation = generation
            order.append((slot, generation))
        } else {
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slots[slot] = Slot(key: key, value: value, generation: generation)
            } else {
                slot = slots.count
                slots.append(Slot(key: key, value: value, generation: generation))
            }
            slotOfKey[key] = slot
            order.append((slot, generation))
        }
        compactIfNeeded()
    }

    /// Changes the key's value in place and makes it the most recent key; `nil` when the key
    /// is absent.
    @inlinable @discardableResult
    public mutating func touch<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let slot = slotOfKey[key] else { return nil }
        let generation = makeGeneration()
        slots[slot].generation = generation
        order.append((slot, generation))
        defer { compactIfNeeded() }
        return try Self.modify(&slots[slot].value, body)
    }

    /// Changes the key's value in place without touching it; `nil` when the key is absent.
    @inlinable @discardableResult
    public mutating func modify<Result>(_ key: Key, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard let slot = slotOfKey[key] else { return nil }
        return try Self.modify(&slots[slot].value, body)
    }

    /// Removes the key; its touches in the queue go stale.
    @inlinable @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = slotOfKey.removeValue(forKey: key) else { return nil }
        let removed = free(slot)
        compactIfNeeded()
        return removed
    }

    /// The least recently touched key and its value, if any.
    @inlinable public mutating func leastRecent() -> (key: Key, value: Value)? {
        guard let slot = leastRecentSlot(), let key = slots[slot].key, let value = slots[slot].value else { return nil }
        return (key, value)
    }

    /// Removes and returns the least recently touched key and its value, if any.
    @inlinable @discardableResult
    public mutating func removeLeastRecent() -> (key: Key, value: Value)? {
        guard let slot = leastRecentSlot(), let key = slots[slot].key else { return nil }
        order.removeFirst()
        slotOfKey[key] = nil
        guard let value = free(slot) else { return nil }
        return (key, value)
    }

    /// Every key and value, in no particular order.
    @inlinable public var keysAndValues: [(key: Key, value: Value)] {
        slots.compactMap { slot in
            guard slot.generation != 0, let key = slot.key, let value = slot.value else { return nil }
            return (key, value)
        }
    }

    /// Empties the table.
    @inlinable public mutating func removeAll() {
        slotOfKey.removeAll()
        slots.removeAll()
        freeSlots.removeAll()
        order.removeAll()
    }

    // MARK: Internals

    @inlinable mutating func makeGeneration() -> UInt64 {
        nextGeneration &+= 1
        if nextGeneration == 0 { nextGeneration = 1 }
        return nextGeneration
    }

    /// Whether a touch in the queue is still its slot's latest.
    @inlinable func isLive(_ touch: (slot: Int, generation: UInt64)) -> Bool {
        slots[touch.slot].generation == touch.generation
    }

    /// The slot at the head of the queue once the stale touches before it are dropped.
    @inlinable mutating func leastRecentSlot() -> Int? {
        while let first = order.first {
            if isLive(first) { return first.slot }
            order.removeFirst()
            steps += 1
        }
        return nil
    }

    /// Empties a slot for reuse and returns its value.
    @inlinable mutating func free(_ slot: Int) -> Value? {
        let value = slots[slot].value
        slots[slot].key = nil
        slots[slot].value = nil
        slots[slot].generation = 0
        freeSlots.append(slot)
        return value
    }

    /// Runs `body` on the value in place: moved out of its slot (so that it stays uniquely
    /// referenced, with no copy on write) and back.
    @inlinable static func modify<Result>(_ value: inout Value?, _ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard var unwrapped = value.take() else { return nil }
        defer { value = unwrapped }
        return try body(&unwrapped)
    }

    /// Drops the stale touches once they outnumber the live ones (plus some slack, so that a
    /// small table is not compacted at every touch): the pass is paid for by the touches that
    /// went stale since the last one.
    @inlinable mutating func compactIfNeeded() {
        guard order.count > 2 * slotOfKey.count + 32 else { return }
        steps += order.count
        var kept = Deque<(slot: Int, generation: UInt64)>(minimumCapacity: slotOfKey.count)
        for touch in order where isLive(touch) { kept.append(touch) }
        order = kept
    }
}

extension RecencyTable: Sendable where Key: Sendable, Value: Sendable {}
extension RecencyTable.Slot: Sendable where Key: Sendable, Value: Sendable {}
