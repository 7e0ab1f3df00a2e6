/// Weak references to observers of one kind, in registration order. Dead references are
/// dropped whenever the list is read.
struct WeakObservers<Observer>: Sendable {
    private struct Entry: @unchecked Sendable {
        // `Observer` is always a class-bound protocol that refines `Sendable`; the generic
        // parameter cannot say so, hence the unchecked conformance.
        weak var object: AnyObject?
    }

    private var entries: [Entry] = []

    mutating func add(_ observer: AnyObject) {
        entries.removeAll { $0.object == nil || $0.object === observer }
        entries.append(Entry(object: observer))
    }

    mutating func remove(_ observer: AnyObject) {
        entries.removeAll { $0.object == nil || $0.object === observer }
    }

    /// The observers still alive.
    mutating func live() -> [Observer] {
        entries.removeAll { $0.object == nil }
        return entries.compactMap { $0.object as? Observer }
    }

    var isEmpty: Bool { !entries.contains { $0.object != nil } }
}
