import DequeModule
import Synchronization

/// Lets one task at a time through, in arrival order; used where the controller allows only
/// one procedure of a kind at a time (e.g. one LE Create Connection).
final class AsyncSerialGate: Sendable {
    private struct State: Sendable {
        var isHeld = false
        var waiters: Deque<(id: UInt64, continuation: CheckedContinuation<Void, any Error>)> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Waits for the gate; throws `CancellationError` if the task is cancelled while waiting.
    func enter() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let enterNow = state.withLock { state -> Bool? in
                    if !state.isHeld {
                        state.isHeld = true
                        return true
                    }
                    // A task cancelled before it got here ran the cancellation handler already,
                    // when it was not yet in line: it must not wait.
                    if Task.isCancelled { return nil }
                    state.waiters.append((id, continuation))
                    return false
                }
                switch enterNow {
                case true?: continuation.resume()
                case nil: continuation.resume(throwing: CancellationError())
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Opens the gate for the next waiter.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if let next = state.waiters.popFirst() { return next.continuation }
            state.isHeld = false
            return nil
        }
        next?.resume()
    }
}
