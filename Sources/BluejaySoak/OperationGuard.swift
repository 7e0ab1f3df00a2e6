import Bluejay
import BluetoothHost
import Synchronization

/// How an operation ended.
enum OperationOutcome: Sendable {
    case succeeded
    /// Failed with this error type (see ``SoakStatistics/type(of:)``).
    case failed(String)
    /// Did not return within the hang limit; its task was cancelled and abandoned.
    case hung
}

/// Runs one operation in a task of its own and waits for it at most `limit`: an operation
/// that has not returned by then is a hang. Its task is cancelled and abandoned, not awaited
/// (an operation that ignores cancellation would otherwise hang the caller too); the task
/// tracker still counts it, so it shows up again after shutdown if it never ends.
enum OperationGuard {
    static func run(_ name: String, limit: Duration, tasks: TaskTracker, monitor: HangMonitor,
                    _ body: @escaping @Sendable () async throws -> Void) async -> OperationOutcome {
        let once = OneShotOutcome()
        return await withCheckedContinuation { (continuation: CheckedContinuation<OperationOutcome, Never>) in
            once.begin(continuation)
            let work = tasks.spawn(name) {
                do {
                    try await body()
                    once.finish(.succeeded)
                } catch {
                    once.finish(.failed(describe(error)))
                }
            }
            let watch = monitor.watch(until: .now + limit) {
                if once.finish(.hung) { work.cancel() }
            }
            once.setWatch(watch, monitor: monitor)
        }
    }

    /// A short name for an error: a ``BluejayError``'s (see ``SoakStatistics/type(of:)``),
    /// or the case of one from below Bluejay (a discovery run on the host).
    static func describe(_ error: any Error) -> String {
        if let error = error as? BluejayError { return SoakStatistics.type(of: error) }
        if let error = error as? HostError {
            switch error {
            case let .disconnected(reason): return "host disconnected (\(reason))"
            case let .att(att): return "host att (\(att.code))"
            default:
                // The case's name: the label of its payload, or the case itself.
                return "host \(Mirror(reflecting: error).children.first?.label ?? String(describing: error))"
            }
        }
        if error is CancellationError { return "cancelled" }
        return String(describing: type(of: error))
    }
}

/// The first of the work and the hang monitor to finish resumes the caller; the other is ignored.
private final class OneShotOutcome: Sendable {
    private struct State {
        var continuation: CheckedContinuation<OperationOutcome, Never>?
        var watch: (id: UInt64, monitor: HangMonitor)?
        var isFinished = false
    }

    private let state = Mutex(State())

    func begin(_ continuation: CheckedContinuation<OperationOutcome, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func setWatch(_ id: UInt64, monitor: HangMonitor) {
        let finished = state.withLock { state -> Bool in
            state.watch = (id, monitor)
            return state.isFinished
        }
        if finished { monitor.unwatch(id) }
    }

    @discardableResult
    func finish(_ outcome: OperationOutcome) -> Bool {
        let (continuation, watch) = state.withLock { state -> (CheckedContinuation<OperationOutcome, Never>?, (id: UInt64, monitor: HangMonitor)?) in
            guard !state.isFinished else { return (nil, nil) }
            state.isFinished = true
            defer {
                state.continuation = nil
                state.watch = nil
            }
            return (state.continuation, state.watch)
        }
        guard let continuation else { return false }
        watch.map { $0.monitor.unwatch($0.id) }
        continuation.resume(returning: outcome)
        return true
    }
}
