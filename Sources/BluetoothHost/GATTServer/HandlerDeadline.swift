import BluetoothCore
import Synchronization

/// Runs an application's read or write handler, giving up on it after a timeout, so that a
/// handler that never answers does not stall the client's bearer until its ATT transaction
/// times out. A handler that answers late is ignored.
enum HandlerDeadline {
    private final class Once<Value: Sendable>: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<Value?, Never>?, timer: Task<Void, Never>?)>((nil, nil))

        func arm(_ continuation: CheckedContinuation<Value?, Never>) { state.withLock { $0.continuation = continuation } }

        func setTimer(_ timer: Task<Void, Never>) {
            let fired = state.withLock { state -> Bool in
                guard state.continuation != nil else { return true }
                state.timer = timer
                return false
            }
            if fired { timer.cancel() }
        }

        func resume(_ value: Value?) {
            let (continuation, timer) = state.withLock { state in
                defer { state = (nil, nil) }
                return state
            }
            timer?.cancel()
            continuation?.resume(returning: value)
        }
    }

    /// The handler's answer, or `nil` if it took longer than `timeout`.
    static func run<Value: Sendable>(timeout: Duration, clock: BluetoothClock, _ handler: @escaping @Sendable () async -> Value) async -> Value? {
        let once = Once<Value>()
        let deadline = clock.now + timeout
        return await withCheckedContinuation { continuation in
            once.arm(continuation)
            Task { once.resume(await handler()) }
            once.setTimer(Task {
                do { try await clock.sleep(until: deadline) } catch { return }
                once.resume(nil)
            })
        }
    }
}
