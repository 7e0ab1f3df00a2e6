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
    private let callback: Mutex<(@Sendable (Result<T, BluejayError>) -> Void)?>

    init(_ callback: @escaping @Sendable (Result<T, BluejayError>) -> Void) {
        self.callback = Mutex(callback)
    }

    var isDone: Bool { callback.withLock { $0 == nil } }

    func deliver(_ result: Result<T, BluejayError>) {
        let taken = callback.withLock { callback -> (@Sendable (Result<T, BluejayError>) -> Void)? in
            defer { callback = nil }
            return callback
        }
        taken?(result)
    }
}
