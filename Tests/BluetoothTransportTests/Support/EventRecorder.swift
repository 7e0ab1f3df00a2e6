import BluetoothTransport
import Glibc
import Synchronization

/// Collects what a transport delivers and lets a test wait, with a timeout, until enough
/// events have arrived: no sleeping and hoping.
final class EventRecorder: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var events: [TransportEvent] = []
        var batchSizes: [Int] = []
        var threads: [pthread_t] = []
        var waiters: [Waiter] = []
        var expired: Set<Int> = []
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Pass this to `start(receiver:)`.
    var receiver: @Sendable (TransportEvent) -> Void {
        { [self] event in record(event) }
    }

    /// Everything delivered so far.
    var events: [TransportEvent] { state.withLock { $0.events } }

    /// The distinct threads the receiver was called on.
    var threads: [pthread_t] { state.withLock { $0.threads } }

    var packets: [H4Packet] { events.compactMap(\.packet) }

    /// How many packets each batch delivered, in order.
    var batchSizes: [Int] { state.withLock { $0.batchSizes } }

    var closeReasons: [TransportError?] { events.compactMap(\.closeReason) }

    /// Records an event; a batch of packets counts as one event per packet.
    func record(_ event: TransportEvent) {
        let thread = pthread_self()
        let events: [TransportEvent]
        if case let .packets(packets) = event { events = packets.map { .packets([$0]) } } else { events = [event] }
        let satisfied = state.withLock { state -> [Waiter] in
            state.events.append(contentsOf: events)
            if case let .packets(packets) = event { state.batchSizes.append(packets.count) }
            if !state.threads.contains(where: { pthread_equal($0, thread) != 0 }) { state.threads.append(thread) }
            let satisfied = state.waiters.filter { $0.count <= state.events.count }
            state.waiters.removeAll { $0.count <= state.events.count }
            return satisfied
        }
        for waiter in satisfied { waiter.continuation.resume(returning: true) }
    }

    /// Waits until at least `count` events have arrived and returns all of them.
    @discardableResult
    func waitForEvents(count: Int, timeout: Duration = .seconds(10)) async throws -> [TransportEvent] {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            expire(id)
        }
        defer { timer.cancel() }
        let arrived = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let outcome: Bool? = state.withLock { state in
                if state.events.count >= count { return true }
                if state.expired.contains(id) { return false }
                state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                return nil
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
        let events = self.events
        guard arrived else {
            throw TestFailure("timed out after \(timeout) waiting for \(count) event(s); got \(events.count): \(events)")
        }
        return events
    }

    /// Waits for the `.closed` event and returns its reason.
    func waitForClose(timeout: Duration = .seconds(10)) async throws -> TransportError? {
        while true {
            let snapshot = events
            if let reason = snapshot.lazy.compactMap(\.closeReason).first { return reason }
            try await waitForEvents(count: snapshot.count + 1, timeout: timeout)
        }
    }

    private func expire(_ id: Int) {
        let waiter = state.withLock { state -> Waiter? in
            state.expired.insert(id)
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }
}

extension TransportEvent {
    /// The packet of a one-packet batch (the recorder splits batches).
    var packet: H4Packet? {
        if case let .packets(packets) = self, packets.count == 1 { return packets.first }
        return nil
    }

    /// `.some(reason)` for `.closed(reason)`, `nil` for a packet.
    var closeReason: TransportError?? {
        if case let .closed(reason) = self { return .some(reason) }
        return nil
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
