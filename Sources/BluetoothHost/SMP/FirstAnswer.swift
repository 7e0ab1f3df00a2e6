import Synchronization

/// The first of several answers to one question, handed to one waiting continuation: the
/// agent's, or a fallback when time runs out (see ``LEHost/boundedAnswer(fallback:_:)``).
/// Later answers are dropped, and the timeout's task is cancelled once an answer came.
final class FirstAnswer<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, Never>?
        var early: T?
        var answered = false
        var timeout: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// Sets who waits; an answer that came first is delivered at once.
    func wait(_ continuation: CheckedContinuation<T, Never>) {
        let early = state.withLock { state -> T? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    /// The task that answers with the fallback; cancelled if the answer comes first.
    func onTimeout(_ task: Task<Void, Never>) {
        let answered = state.withLock { state -> Bool in
            state.timeout = task
            return state.answered
        }
        if answered { task.cancel() }
    }

    /// Answers, if nobody did yet; returns whether this was the first answer.
    @discardableResult
    func resume(_ value: T) -> Bool {
        let (first, continuation, timeout) = state.withLock { state -> (Bool, CheckedContinuation<T, Never>?, Task<Void, Never>?) in
            guard !state.answered else { return (false, nil, nil) }
            state.answered = true
            if state.continuation == nil { state.early = value }
            defer { state.continuation = nil }
            return (true, state.continuation, state.timeout)
        }
        continuation?.resume(returning: value)
        timeout?.cancel()
        return first
    }
}
