import Foundation
import Synchronization

/// Items arriving from another thread, each stamped with the link's simulated time, and
/// waits for them. Each item is returned by at most one wait, so waiting twice for the same
/// kind yields two items in order.
///
/// With a manual clock, ``HCITestHost`` finds items with ``take(where:)`` while it moves
/// simulated time; ``next(_:timeout:where:)`` waits in real time, for links that run on it.
final class TestInbox<Item: Sendable>: Sendable {
    struct Stamped: Sendable {
        var item: Item
        /// Simulated time when it arrived.
        var time: Duration
    }

    private struct Waiter {
        var matches: @Sendable (Item) -> Bool
        var continuation: CheckedContinuation<Stamped, any Error>
    }

    private struct State {
        var items: [Stamped] = []
        var taken: [Bool] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0

        /// Marks the first untaken match as taken and returns it.
        mutating func take(where matches: (Item) -> Bool) -> Stamped? {
            for index in items.indices where !taken[index] && matches(items[index].item) {
                taken[index] = true
                return items[index]
            }
            return nil
        }
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Duration

    /// An inbox whose items are stamped with `now()`.
    init(now: @escaping @Sendable () -> Duration) {
        self.now = now
    }

    func append(_ item: Item) {
        let stamped = Stamped(item: item, time: now())
        let resumed: CheckedContinuation<Stamped, any Error>? = state.withLock { state in
            state.items.append(stamped)
            state.taken.append(false)
            for key in state.waiters.keys.sorted() {
                guard let waiter = state.waiters[key], waiter.matches(item) else { continue }
                state.waiters[key] = nil
                state.taken[state.taken.count - 1] = true
                return waiter.continuation
            }
            return nil
        }
        resumed?.resume(returning: stamped)
    }

    /// Everything received so far, taken or not.
    var all: [Stamped] { state.withLock { $0.items } }

    /// Items not yet returned by a wait.
    var untaken: [Stamped] {
        state.withLock { state in zip(state.items, state.taken).filter { !$0.1 }.map(\.0) }
    }

    /// The first item not yet taken that matches, taken now; `nil` if there is none.
    func take(where matches: (Item) -> Bool) -> Stamped? {
        state.withLock { $0.take(where: matches) }
    }

    /// Whether an item not yet taken matches.
    func contains(where matches: (Item) -> Bool) -> Bool {
        state.withLock { state in state.items.indices.contains { !state.taken[$0] && matches(state.items[$0].item) } }
    }

    /// The first item not yet taken that matches, waiting for it up to `timeout` of real time.
    func next(_ description: String, timeout: Duration = .seconds(20),
              where matches: @escaping @Sendable (Item) -> Bool = { _ in true }) async throws -> Stamped {
        let key = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Stamped, any Error>) in
                let found: Stamped? = state.withLock { state in
                    if let found = state.take(where: matches) { return found }
                    state.waiters[key] = Waiter(matches: matches, continuation: continuation)
                    return nil
                }
                if let found {
                    continuation.resume(returning: found)
                    return
                }
                // Started once the waiter is registered, so that it always finds it.
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.expire(key, TestTimeout(description: "no \(description) within \(timeout)"))
                }
            }
        } onCancel: {
            expire(key, CancellationError())
        }
    }

    private func expire(_ key: Int, _ error: any Error) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: key) }
        waiter?.continuation.resume(throwing: error)
    }

    /// Marks every item received so far that matches as taken, so later waits see only newer ones.
    func discard(where matches: @Sendable (Item) -> Bool = { _ in true }) {
        state.withLock { state in
            for index in state.items.indices where matches(state.items[index].item) { state.taken[index] = true }
        }
    }
}
