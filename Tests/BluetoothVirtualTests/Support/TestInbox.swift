import Foundation
import Synchronization

/// Why a wait in a test failed.
struct WaitTimeout: Error, CustomStringConvertible {
    var description: String
}

/// Items arriving from another thread, and waits for them with a timeout. Each item is
/// returned by at most one wait, so waiting twice for the same kind yields two items in
/// order.
final class TestInbox<Item: Sendable>: Sendable {
    struct Stamped: Sendable {
        var item: Item
        var time: ContinuousClock.Instant
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
    }

    private let state = Mutex(State())

    init() {}

    func append(_ item: Item) {
        let stamped = Stamped(item: item, time: .now)
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

    /// The first item not yet taken that matches, waiting for it up to `timeout`.
    func next(_ description: String, timeout: Duration = .seconds(5),
              where matches: @escaping @Sendable (Item) -> Bool = { _ in true }) async throws -> Stamped {
        let key = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiter = state.withLock { $0.waiters.removeValue(forKey: key) }
            waiter?.continuation.resume(throwing: WaitTimeout(description: "no \(description) within \(timeout)"))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let found: Stamped? = state.withLock { state in
                for index in state.items.indices where !state.taken[index] && matches(state.items[index].item) {
                    state.taken[index] = true
                    return state.items[index]
                }
                state.waiters[key] = Waiter(matches: matches, continuation: continuation)
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    /// Marks every item received so far that matches as taken, so later waits see only newer ones.
    func discard(where matches: @Sendable (Item) -> Bool = { _ in true }) {
        state.withLock { state in
            for index in state.items.indices where matches(state.items[index].item) { state.taken[index] = true }
        }
    }

    /// Checks that nothing matching arrives for `duration` (and none is waiting untaken):
    /// a bounded wait used to assert an absence, never to synchronise.
    func expectNothing(_ description: String, for duration: Duration, where matches: @escaping @Sendable (Item) -> Bool) async throws -> Bool {
        do {
            _ = try await next(description, timeout: duration, where: matches)
            return false
        } catch is WaitTimeout {
            return true
        }
    }
}
