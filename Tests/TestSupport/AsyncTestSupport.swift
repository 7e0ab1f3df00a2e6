import Synchronization

// Helpers for tests that wait on events: every wait has a time limit, none sleeps for a
// fixed time. Shared by the test targets (`import TestSupport`); the plain waits with their
// time limits are in Waiting.swift.

/// Values collected from callbacks, from any thread.
public final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    public init() {}

    public func append(_ item: Element) { items.withLock { $0.append(item) } }
    public var all: [Element] { items.withLock { $0 } }
    public var count: Int { items.withLock { $0.count } }
}

/// Items recorded as they happen (packets written, events received), that a test can wait
/// on: ``wait(timeout:until:)`` returns as soon as the items satisfy a condition.
public final class AwaitableLog<Element: Sendable>: Sendable {
    private struct Waiter {
        var predicate: @Sendable ([Element]) -> Bool
        var continuation: CheckedContinuation<[Element]?, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var items: [Element] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var items: [Element] { state.withLock { $0.items } }
    public var count: Int { state.withLock { $0.items.count } }

    public func append(_ item: Element) {
        let ready = state.withLock { state -> [(Waiter, [Element])] in
            state.items.append(item)
            let items = state.items
            var ready: [(Waiter, [Element])] = []
            for (id, waiter) in state.waiters where waiter.predicate(items) {
                state.waiters[id] = nil
                ready.append((waiter, items))
            }
            return ready
        }
        for (waiter, items) in ready {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: items)
        }
    }

    /// Waits until the items satisfy `predicate` and returns them; `nil` after `timeout`.
    public func wait(timeout: Duration = hangGuard, until predicate: @escaping @Sendable ([Element]) -> Bool) async -> [Element]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Element]?, Never>) in
            let immediate = state.withLock { state -> [Element]? in
                if predicate(state.items) { return state.items }
                state.nextID += 1
                let id = state.nextID
                let timer = Task { [weak self] in
                    do { try await Task.sleep(for: timeout) } catch { return }
                    self?.expire(id)
                }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation, timer: timer)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Waits until there are at least `count` items.
    public func wait(forCount count: Int, timeout: Duration = hangGuard) async -> [Element]? {
        await wait(timeout: timeout) { $0.count >= count }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: nil)
    }
}

/// A gate a test opens by hand: work that reaches ``wait()`` holds there until ``open()``, and
/// the test knows when it got there (``waitForArrivals(_:timeout:)``), so nothing sleeps to
/// keep something busy.
public final class TestGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    private let arrivals = AwaitableLog<Void>()

    public init() {}

    /// Holds until the gate is open (at once if it is); throws `CancellationError` when the
    /// waiting task is cancelled first.
    public func wait() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.isOpen { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                arrivals.append(())
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Lets every waiter through, and later ones at once.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Waits until `count` calls of ``wait()`` have arrived in all; throws ``TestTimeout``
    /// after `timeout`.
    public func waitForArrivals(_ count: Int = 1, timeout: Duration = .seconds(30)) async throws {
        guard await arrivals.wait(forCount: count, timeout: timeout) != nil else {
            throw TestTimeout(description: "\(count) arrival(s) at the gate did not come within \(timeout)")
        }
    }
}
