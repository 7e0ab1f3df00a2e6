import Synchronization

/// The first of several competing outcomes (a result, a deadline, a cancellation): the
/// first ``deliver(_:)`` wins, the others are refused, and ``wait()`` returns the winner.
final class FirstOutcome<T: Sendable>: Sendable {
    private struct State: Sendable {
        var result: Result<T, BluejayError>?
        var waiter: CheckedContinuation<Result<T, BluejayError>, Never>?
    }

    private let state = Mutex(State())

    /// Offers an outcome; `true` when it is the first.
    @discardableResult
    func deliver(_ result: Result<T, BluejayError>) -> Bool {
        let (won, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Result<T, BluejayError>, Never>?) in
            guard state.result == nil else { return (false, nil) }
            state.result = result
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(returning: result)
        return won
    }

    /// The first outcome, once there is one.
    func wait() async -> Result<T, BluejayError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<T, BluejayError>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
