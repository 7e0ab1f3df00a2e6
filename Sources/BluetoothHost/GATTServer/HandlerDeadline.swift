import BluetoothCore
import Synchronization

/// Runs an application's read or write handler, giving up on it after a timeout, so that a
/// handler that never answers does not stall the client's bearer until its ATT transaction
/// times out. A handler given up on is cancelled (it may watch `Task.isCancelled`), and its
/// late answer is ignored.
enum HandlerDeadline {
    private final class Once<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value?, Never>?
            var work: Task<Void, Never>?
            var timer: Task<Void, Never>?
        }

        private let state = Mutex(State())

        func arm(_ continuation: CheckedContinuation<Value?, Never>) { state.withLock { $0.continuation = continuation } }

        /// The handler's task and the timer; if the outcome is already known, both are cancelled.
        func setTasks(work: Task<Void, Never>, timer: Task<Void, Never>) {
            let decided = state.withLock { state -> Bool in
                guard state.continuation != nil else { return true }
                state.work = work
                state.timer = timer
                return false
            }
            if decided {
                work.cancel()
                timer.cancel()
            }
        }

        /// The handler answered.
        func answer(_ value: Value) {
            let (continuation, timer) = state.withLock { state in
                defer { state = State() }
                return (state.continuation, state.timer)
            }
            timer?.cancel()
            continuation?.resume(returning: value)
        }

        /// The time ran out: the handler is cancelled and the caller hears `nil`.
        func timeOut() {
            let (continuation, work) = state.withLock { state in
                defer { state = State() }
                return (state.continuation, state.work)
            }
            work?.cancel()
            continuation?.resume(returning: nil)
        }
    }

    /// The handler's answer, or `nil` if it took longer than `timeout`.
    static func run<Value: Sendable>(timeout: Duration, clock: BluetoothClock, _ handler: @escaping @Sendable () async -> Value) async -> Value? {
        let once = Once<Value>()
        let deadline = clock.now + timeout
        return await withCheckedContinuation { continuation in
            once.arm(continuation)
            let work = Task { once.answer(await handler()) }
            let timer = Task {
                do { try await clock.sleep(until: deadline) } catch { return }
                once.timeOut()
            }
            once.setTasks(work: work, timer: timer)
        }
    }
}
