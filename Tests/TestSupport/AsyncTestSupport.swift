import Synchronization

// Helpers for tests that wait on events: every wait has a time limit, none sleeps for a
// fixed time. Shared by the test targets (`import TestSupport`).

/// A test waited longer than it allows for something that should have happened.
public struct TestTimeout: Error, CustomStringConvertible {
    public var description: String
}

/// Runs `body` and returns its result, or throws ``TestTimeout`` after `timeout`: a test
/// waits on events, never for a fixed time, and never hangs. On timeout the body's task is
/// cancelled and abandoned (if it ignores cancellation it stays behind; the test has failed).
public func withTestTimeout<T: Sendable>(_ timeout: Duration = .seconds(20), _ what: String = "operation",
                                  _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = TimeoutRace<T>()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        race.begin(continuation)
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            race.finish(result)
        }
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            if race.finish(.failure(TestTimeout(description: "\(what) did not finish within \(timeout)"))) { work.cancel() }
        }
        race.setTimer(timer)
    }
}

/// Whichever of the work and the timer ends first resumes the caller; the other is ignored.
private final class TimeoutRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var timer: Task<Void, Never>?
        var isFinished = false
    }

    private let state = Mutex(State())

    func begin(_ continuation: CheckedContinuation<T, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func setTimer(_ timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            state.timer = timer
            return state.isFinished
        }
        if finished { timer.cancel() }
    }

    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            guard !state.isFinished else { return (nil, nil) }
            state.isFinished = true
            defer { state.continuation = nil }
            return (state.continuation, state.timer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(with: result)
        return true
    }
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
    public func wait(timeout: Duration = .seconds(20), until predicate: @escaping @Sendable ([Element]) -> Bool) async -> [Element]? {
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
    public func wait(forCount count: Int, timeout: Duration = .seconds(20)) async -> [Element]? {
        await wait(timeout: timeout) { $0.count >= count }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: nil)
    }
}

/// Waits until `condition` holds, checking it every 2 ms (without spinning a thread of a
/// loaded machine); for state with no event to wait on. `false` after `timeout`, a hang guard.
public func eventually(timeout: Duration = .seconds(30), _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        do { try await Task.sleep(for: .milliseconds(2)) } catch { return await condition() }
    }
    return await condition()
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
