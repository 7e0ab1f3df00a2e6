import Synchronization

/// What an operation needs from the link, so that a disconnection fails the right ones.
enum OperationKind: Sendable, Equatable {
    /// Reads, writes, listens, discovery, synchronous background work: fail on disconnection.
    case gatt
    /// A connection attempt.
    case connect
    /// A queued disconnection.
    case disconnect
    /// A scan: does not depend on the link.
    case scan
}

/// One request in the FIFO queue: its work, and a one-shot delivery of its outcome.
///
/// ``fail(_:)`` may be called at any time and from any thread (queued, running, or already
/// done): the first outcome wins, later ones are dropped. This is how cancellation, timeouts
/// and disconnections report to the operation's own callback exactly once.
final class QueuedOperation: Identifiable, Sendable, CustomStringConvertible {
    let id: UInt64
    let name: String
    let kind: OperationKind
    private let body: @Sendable () async -> Void
    private let failure: @Sendable (BluejayError) -> Void
    private let done: @Sendable () -> Bool

    private init(id: UInt64, name: String, kind: OperationKind, body: @escaping @Sendable () async -> Void,
                 failure: @escaping @Sendable (BluejayError) -> Void, done: @escaping @Sendable () -> Bool) {
        self.id = id
        self.name = name
        self.kind = kind
        self.body = body
        self.failure = failure
        self.done = done
    }

    /// An operation whose `work` produces a value; `deliver` receives the outcome once.
    static func make<T: Sendable>(
        id: UInt64, name: String, kind: OperationKind,
        work: @escaping @Sendable () async throws -> T,
        deliver: @escaping @Sendable (Result<T, BluejayError>) -> Void
    ) -> QueuedOperation {
        let outcome = OneShot(deliver)
        return QueuedOperation(
            id: id, name: name, kind: kind,
            body: {
                guard !outcome.isDone else { return }
                do {
                    outcome.deliver(.success(try await work()))
                } catch {
                    outcome.deliver(.failure(BluejayError(error, operation: name)))
                }
            },
            failure: { outcome.deliver(.failure($0)) },
            done: { outcome.isDone }
        )
    }

    /// Runs the work (once, by the runner).
    func run() async { await body() }

    /// Reports `error` to the operation's callback unless it has already had an outcome.
    func fail(_ error: BluejayError) { failure(error) }

    /// Whether the outcome has been delivered.
    var isFinished: Bool { done() }

    var description: String { "#\(id) \(name)" }
}

/// Calls its callback at most once.
final class OneShot<T: Sendable>: Sendable {
    /// The callback sits in a struct: a `Mutex` whose value is itself a function type
    /// reabstracts it on each `withLock`, wrapping it in one more thunk every time.
    private struct Pending: Sendable {
        var callback: (@Sendable (Result<T, BluejayError>) -> Void)?
    }

    private let pending: Mutex<Pending>

    init(_ callback: @escaping @Sendable (Result<T, BluejayError>) -> Void) {
        pending = Mutex(Pending(callback: callback))
    }

    var isDone: Bool { pending.withLock { $0.callback == nil } }

    func deliver(_ result: Result<T, BluejayError>) {
        let taken = pending.withLock { pending in
            defer { pending.callback = nil }
            return pending.callback
        }
        taken?(result)
    }
}
