import Synchronization

/// A wait that several things may end (a completion, an ``AbortSignal``, a timer): the first
/// ``resume(with:)`` wins and later ones are dropped. The continuation may be set before or
/// after the first resume; either way it is resumed exactly once.
public final class OneShotContinuation: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Void, any Error>)
        case resumed(Result<Void, any Error>)
        case done
    }

    private let state = Mutex(State.empty)

    public init() {}

    /// The continuation to resume; call once.
    public func set(_ continuation: CheckedContinuation<Void, any Error>) {
        let early = state.withLock { state -> Result<Void, any Error>? in
            guard case let .resumed(result) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .done
            return result
        }
        if let early { continuation.resume(with: early) }
    }

    /// Ends the wait with `result`, unless it has ended already.
    public func resume(with result: Result<Void, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            switch state {
            case .empty:
                state = .resumed(result)
                return nil
            case let .waiting(continuation):
                state = .done
                return continuation
            case .resumed, .done:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}
