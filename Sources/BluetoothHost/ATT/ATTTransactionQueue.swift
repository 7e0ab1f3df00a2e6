import BluetoothCore
import DequeModule

/// The client side of ATT's sequential protocol (Core 6.0, Vol 3, Part F, 3.3.2): one request
/// outstanding per bearer, later ones wait in order. A plain state machine: no I/O, no clock.
struct ATTTransactionQueue<Ticket: Sendable>: Sendable {
    struct Transaction: Sendable {
        let id: UInt64
        let request: ATTPDU
        /// `nil` once the caller stopped waiting (cancelled): the response is still awaited,
        /// because no other request may go out before it.
        var ticket: Ticket?
        /// When the caller stops waiting, if it set a deadline.
        var deadline: BluetoothClock.Instant? = nil
    }

    private var waiting: Deque<Transaction> = []
    private(set) var outstanding: Transaction?

    var isIdle: Bool { outstanding == nil && waiting.isEmpty }

    /// Queues a request; returns it if it may be sent now.
    mutating func enqueue(_ transaction: Transaction) -> Transaction? {
        waiting.append(transaction)
        return advance()
    }

    /// Matches a response (or Error Response) to the outstanding request. Returns `nil` when
    /// nothing is outstanding or the response answers another request: a protocol error the
    /// caller reports and drops.
    mutating func receive(_ response: ATTPDU) -> (answered: Transaction, next: Transaction?)? {
        guard let current = outstanding else { return nil }
        let matches: Bool
        if case let .errorResponse(error) = response {
            matches = error.requestOpcode == current.request.opcode
        } else {
            matches = response.opcode == current.request.expectedResponseOpcode
        }
        guard matches else { return nil }
        outstanding = nil
        return (current, advance())
    }

    /// Ends the outstanding request without a matching response (the peer sent one that
    /// could not be decoded). Returns it and the request that may be sent next.
    mutating func finishOutstanding() -> (answered: Transaction, next: Transaction?)? {
        guard let current = outstanding else { return nil }
        outstanding = nil
        return (current, advance())
    }

    /// The caller no longer waits for a request. A waiting one is removed; the outstanding
    /// one keeps its place until its response arrives. Returns the ticket to resume.
    mutating func cancel(id: UInt64) -> Ticket? {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            return waiting.remove(at: index).ticket
        }
        guard var current = outstanding, current.id == id else { return nil }
        defer {
            current.ticket = nil
            outstanding = current
        }
        return current.ticket
    }

    /// The earliest deadline of a caller still waiting.
    var earliestDeadline: BluetoothClock.Instant? {
        var earliest: BluetoothClock.Instant?
        func consider(_ transaction: Transaction) {
            guard transaction.ticket != nil, let deadline = transaction.deadline else { return }
            earliest = earliest.map { min($0, deadline) } ?? deadline
        }
        if let outstanding { consider(outstanding) }
        waiting.forEach(consider)
        return earliest
    }

    /// Lets go of the callers whose deadline is at or before `now`: a waiting request is
    /// removed, the outstanding one keeps its place until its response. Returns their tickets.
    mutating func expireDeadlines(at now: BluetoothClock.Instant) -> [Ticket] {
        var tickets: [Ticket] = []
        waiting.removeAll { transaction in
            guard let deadline = transaction.deadline, deadline <= now else { return false }
            if let ticket = transaction.ticket { tickets.append(ticket) }
            return true
        }
        if var current = outstanding, let deadline = current.deadline, deadline <= now, let ticket = current.ticket {
            tickets.append(ticket)
            current.ticket = nil
            outstanding = current
        }
        return tickets
    }

    /// Removes everything, for when the bearer closes; returns the tickets to fail.
    mutating func removeAll() -> [Ticket] {
        let tickets = ([outstanding].compactMap { $0 } + waiting).compactMap(\.ticket)
        outstanding = nil
        waiting.removeAll()
        return tickets
    }

    private mutating func advance() -> Transaction? {
        guard outstanding == nil, let next = waiting.popFirst() else { return nil }
        outstanding = next
        return next
    }
}
