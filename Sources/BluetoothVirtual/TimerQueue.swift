/// The pending timers of the simulation, ordered by deadline and, for equal deadlines, by
/// the order they were scheduled in. A plain value: the link drives it with one real timer
/// armed at ``nextDeadline``.
struct TimerQueue<Payload: Sendable>: Sendable {
    /// Identifies a scheduled timer, to cancel it.
    struct ID: Hashable, Sendable {
        fileprivate let sequence: UInt64
    }

    private struct Entry: Sendable {
        var deadline: Duration
        var sequence: UInt64
        var payload: Payload

        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }
    }

    /// A binary min-heap of entries.
    private var heap: [Entry] = []
    /// Cancelled entries still in the heap, dropped when they reach its top.
    private var cancelled: Set<UInt64> = []
    private var nextSequence: UInt64 = 0

    init() {}

    /// How many timers are pending (cancelled ones excluded).
    var count: Int { heap.count - cancelled.count }

    /// The earliest pending deadline.
    var nextDeadline: Duration? {
        mutating get {
            dropCancelledTop()
            return heap.first?.deadline
        }
    }

    @discardableResult
    mutating func schedule(at deadline: Duration, _ payload: Payload) -> ID {
        nextSequence += 1
        heap.append(Entry(deadline: deadline, sequence: nextSequence, payload: payload))
        siftUp(heap.count - 1)
        return ID(sequence: nextSequence)
    }

    /// Cancels a timer; cancelling one that already fired or was cancelled does nothing.
    mutating func cancel(_ id: ID?) {
        guard let id, heap.contains(where: { $0.sequence == id.sequence }) else { return }
        cancelled.insert(id.sequence)
    }

    /// Removes and returns the earliest timer whose deadline is at or before `now`.
    mutating func popDue(at now: Duration) -> (deadline: Duration, id: ID, payload: Payload)? {
        dropCancelledTop()
        guard let first = heap.first, first.deadline <= now else { return nil }
        removeTop()
        return (first.deadline, ID(sequence: first.sequence), first.payload)
    }

    /// Forgets every timer.
    mutating func removeAll() {
        heap.removeAll()
        cancelled.removeAll()
    }

    private mutating func dropCancelledTop() {
        while let first = heap.first, cancelled.contains(first.sequence) {
            cancelled.remove(first.sequence)
            removeTop()
        }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
