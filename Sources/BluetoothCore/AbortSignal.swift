import Synchronization

/// A one-shot signal that fails an operation's waits at once, without cancelling the task
/// that runs the operation (see ``RequestScope``).
///
/// A wait registers a handler while it waits (``whenAborted(_:)``) and removes it when done;
/// ``abort(with:)`` calls the registered handlers once, outside the signal's lock, and makes
/// every later registration fail at once. The first abort's error is the one reported.
public final class AbortSignal: Sendable {
    /// A registered handler; remove it with ``AbortSignal/remove(_:)`` once the wait is over.
    public struct Registration: Sendable {
        fileprivate let id: UInt64
    }

    private struct State {
        var error: (any Error)?
        var nextID: UInt64 = 0
        /// Usually one: an operation waits for one thing at a time.
        var handlers: [(id: UInt64, handler: @Sendable (any Error) -> Void)] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Why the signal fired, or `nil` while it has not.
    public var error: (any Error)? { state.withLock { $0.error } }

    /// Fires the signal: every registered handler is called with `error`, and later
    /// registrations are refused. Only the first call has an effect.
    public func abort(with error: any Error) {
        let handlers = state.withLock { state -> [@Sendable (any Error) -> Void] in
            guard state.error == nil else { return [] }
            state.error = error
            defer { state.handlers.removeAll() }
            return state.handlers.map(\.handler)
        }
        handlers.forEach { $0(error) }
    }

    /// Registers `handler` for the duration of a wait. Returns `nil` without registering when
    /// the signal has already fired: the caller must then fail its wait with ``error``.
    public func whenAborted(_ handler: @escaping @Sendable (any Error) -> Void) -> Registration? {
        state.withLock { state -> Registration? in
            guard state.error == nil else { return nil }
            state.nextID &+= 1
            state.handlers.append((state.nextID, handler))
            return Registration(id: state.nextID)
        }
    }

    /// Removes a handler whose wait is over.
    public func remove(_ registration: Registration) {
        state.withLock { state in state.handlers.removeAll { $0.id == registration.id } }
    }
}
