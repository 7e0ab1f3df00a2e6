import Synchronization

// The waits every test target shares: each has a time limit (a hang guard, not a delay: it
// passes only when what the test waits for fails to happen), and none sleeps for a fixed time.
// A failed wait throws ``TestTimeout`` naming what did not happen.

/// How long a wait allows by default: far longer than anything a test waits for takes, even
/// on a loaded two-core machine running eight tests at once (`make test`'s width).
public let hangGuard: Duration = .seconds(30)

/// A test waited longer than it allows for something that should have happened.
public struct TestTimeout: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// Runs `body` and returns its result, or throws ``TestTimeout`` naming `what` after
/// `timeout`. On timeout, or when the calling task is cancelled (it then throws
/// `CancellationError`), the body's task is cancelled and abandoned: if it ignores
/// cancellation it stays behind, and the test has failed anyway.
public func withTimeout<T: Sendable>(_ what: String = "the operation", _ timeout: Duration = hangGuard,
                                     _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = TimeoutRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            guard race.begin(continuation) else { return }
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                race.finish(result)
            }
            let timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                race.finish(.failure(TestTimeout(description: "\(what) did not finish within \(timeout)")))
            }
            race.setTasks(work: work, timer: timer)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// Whichever of the work, the timer and the caller's cancellation ends first resumes the
/// caller and cancels the others' tasks; the rest is ignored.
private final class TimeoutRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var tasks: [Task<Void, Never>] = []
        /// The outcome, once there is one (a cancellation may come before ``begin(_:)``).
        var outcome: Result<T, any Error>?
    }

    private let state = Mutex(State())

    /// Takes the caller's continuation; `false` (and the continuation resumed) when the race
    /// is over already.
    func begin(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let outcome = state.withLock { state -> Result<T, any Error>? in
            if state.outcome == nil { state.continuation = continuation }
            return state.outcome
        }
        guard let outcome else { return true }
        continuation.resume(with: outcome)
        return false
    }

    func setTasks(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let over = state.withLock { state -> Bool in
            state.tasks = [work, timer]
            return state.outcome != nil
        }
        if over { work.cancel(); timer.cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = result
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        continuation?.resume(with: result)
    }
}

/// Waits until `condition` holds, checking it every 5 ms (without spinning a thread of a
/// loaded machine): for state with no event to wait on. Throws ``TestTimeout`` after `timeout`,
/// `CancellationError` when the calling task is cancelled.
public func waitUntil(_ what: String, timeout: Duration = hangGuard, _ condition: () async throws -> Bool) async throws {
    guard try await !poll(until: ContinuousClock.now + timeout, condition) else { return }
    throw TestTimeout(description: "timed out after \(timeout) waiting until \(what)")
}

/// Whether `condition` holds within `timeout`, checking it every 5 ms: for an expectation,
/// `#expect(await eventually { ... })`. `false` when the calling task is cancelled first.
public func eventually(timeout: Duration = hangGuard, _ condition: () async -> Bool) async -> Bool {
    (try? await poll(until: ContinuousClock.now + timeout, condition)) ?? false
}

private func poll(until deadline: ContinuousClock.Instant, _ condition: () async throws -> Bool) async throws -> Bool {
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// Calls a callback-style API (`body` gets the callback to pass on) and returns the first
/// value the callback delivers; throws ``TestTimeout`` after `timeout`.
public func callback<T: Sendable>(_ what: String = "the callback", timeout: Duration = hangGuard,
                                  _ body: (@escaping @Sendable (T) -> Void) -> Void) async throws -> T {
    let delivered = AwaitableLog<T>()
    body { delivered.append($0) }
    guard let value = await delivered.wait(forCount: 1, timeout: timeout)?.first else {
        throw TestTimeout(description: "\(what) did not come within \(timeout)")
    }
    return value
}
