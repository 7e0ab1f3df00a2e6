import DequeModule

/// The order of Bluejay's operations: first in, first out, exactly one running at a time.
/// A plain state machine (no I/O, no clock, no locking): ``OperationRunner`` drives it.
///
/// Unknown identifiers are ignored everywhere: an event that does not match the running
/// operation changes nothing and never traps.
struct FIFOQueue<Element: Identifiable> where Element.ID == UInt64 {
    private(set) var waiting: Deque<Element> = []
    private(set) var running: Element?
    /// While suspended nothing starts (the controller is not ready yet); requests wait.
    private(set) var isSuspended: Bool

    init(suspended: Bool = false) {
        isSuspended = suspended
    }

    var isIdle: Bool { running == nil && waiting.isEmpty }
    var count: Int { waiting.count + (running == nil ? 0 : 1) }

    /// Adds an element at the end, or at the front (it then runs next). Returns the element
    /// to start now, if the queue was idle.
    mutating func enqueue(_ element: Element, atFront: Bool = false) -> Element? {
        if atFront { waiting.prepend(element) } else { waiting.append(element) }
        return advance()
    }

    /// The running element with `id` has finished. Returns the next element to start.
    /// Anything else (an unknown or already finished `id`) changes nothing.
    mutating func finish(_ id: UInt64) -> Element? {
        guard running?.id == id else { return nil }
        running = nil
        return advance()
    }

    /// Takes a waiting element out of the queue (it will not run).
    mutating func removeWaiting(_ id: UInt64) -> Element? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        return waiting.remove(at: index)
    }

    /// Takes every waiting element that matches out of the queue, in order.
    mutating func removeWaiting(where predicate: (Element) -> Bool) -> [Element] {
        var removed: [Element] = []
        var kept: Deque<Element> = []
        for element in waiting {
            if predicate(element) { removed.append(element) } else { kept.append(element) }
        }
        waiting = kept
        return removed
    }

    /// Whether `id` is waiting or running.
    func contains(_ id: UInt64) -> Bool {
        running?.id == id || waiting.contains { $0.id == id }
    }

    mutating func suspend() { isSuspended = true }

    /// Lets elements start again; returns the one to start now.
    mutating func resume() -> Element? {
        isSuspended = false
        return advance()
    }

    private mutating func advance() -> Element? {
        guard !isSuspended, running == nil, let next = waiting.popFirst() else { return nil }
        running = next
        return next
    }
}
extension FIFOQueue: Sendable where Element: Sendable {}
