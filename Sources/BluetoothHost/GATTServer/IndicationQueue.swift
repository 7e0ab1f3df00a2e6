import DequeModule

/// The indications waiting for one client: one outstanding until the client confirms it
/// (Core 6.0, Vol 3, Part F, 3.4.7.2), the others in order behind it. A plain value with no
/// I/O and no clock.
struct IndicationQueue<Ticket: Sendable>: Sendable {
    struct Item: Sendable {
        let id: UInt64
        let handle: UInt16
        let value: [UInt8]
        /// Resumed when the client confirms, or failed.
        var ticket: Ticket?
    }

    /// The most indications waiting behind the outstanding one.
    let capacity: Int
    private(set) var outstanding: Item?
    private var waiting: Deque<Item> = []

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { waiting.count + (outstanding == nil ? 0 : 1) }
    var isFull: Bool { waiting.count >= capacity }

    /// Queues an indication; returns it when it may be sent now, `nil` when it waits. The
    /// caller checks ``isFull`` first.
    mutating func enqueue(_ item: Item) -> Item? {
        waiting.append(item)
        return advance()
    }

    /// The client confirmed: returns the confirmed indication (nil if none was outstanding, a
    /// protocol error to ignore) and the next one to send.
    mutating func confirm() -> (confirmed: Item?, next: Item?) {
        guard let confirmed = outstanding else { return (nil, nil) }
        outstanding = nil
        return (confirmed, advance())
    }

    /// Removes everything, for when the bearer closes or times out; returns the items to fail.
    mutating func removeAll() -> [Item] {
        let items = [outstanding].compactMap { $0 } + waiting
        outstanding = nil
        waiting.removeAll()
        return items
    }

    private mutating func advance() -> Item? {
        guard outstanding == nil, let next = waiting.popFirst() else { return nil }
        outstanding = next
        return next
    }
}
