import BluetoothCore
import BluetoothHost
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

/// One request in the FIFO queue: who runs its work, and a one-shot report of its outcome.
///
/// ``fail(_:)`` may be called at any time and from any thread (queued, running, or already
/// done): the first outcome wins, later ones are dropped. This is how cancellation, timeouts
/// and disconnections report exactly once. A running operation's waits on the stack are
/// failed at once too, through its ``abort`` signal (see ``RequestScope``).
final class QueuedOperation: Identifiable, Sendable, CustomStringConvertible {
    /// Who runs the work once the operation's turn comes.
    enum Runner: Sendable {
        /// The ``OperationRunner`` runs `body` in a task of its own (the callback API). `body`
        /// returns the report of its outcome, which the runner makes once it has marked the
        /// operation finished: a completion that queues the next request then finds the queue
        /// free and starts it at once, on its own thread, rather than behind a finish still on
        /// its way (one thread handoff more per request, `Benchmarks/README.md`).
        case task(@Sendable () async -> Report)
        /// The ``OperationRunner`` calls `begin` on the thread that launches the operation, with
        /// a callback that `begin`'s work calls once, from any thread, with how it went on:
        /// finished, with its report, or with the rest to run in a task of the runner's.
        /// `begin` returns `false` when the work cannot begin so; `otherwise` then runs as
        /// `.task`'s body does. For the callback API's reads and writes with response, whose
        /// response is handled and reported on the transport's reader thread: one thread
        /// handoff less per request than in a task (`Benchmarks/README.md`).
        case started(begin: @Sendable (_ next: @escaping @Sendable (StartedProcedure<Report>) -> Void) -> Bool,
                     otherwise: @Sendable () async -> Report)
        /// The task that queued the operation runs it (the `async` API): the runner only tells
        /// it that its turn has come. No task is made and no thread handoff paid.
        case caller(CallerTurn)
    }

    /// What a finished task's report does: deliver the outcome (or nothing, when a failure
    /// from outside was reported already).
    typealias Report = @Sendable () -> Void

    let id: UInt64
    let name: String
    let kind: OperationKind
    let runner: Runner
    /// Fires when the operation fails from outside while it runs, so that what its work
    /// waits for on the stack lets it go at once.
    let abort: AbortSignal
    private let failure: @Sendable (BluejayError) -> Void
    private let done: @Sendable () -> Bool

    private init(id: UInt64, name: String, kind: OperationKind, runner: Runner, abort: AbortSignal,
                 failure: @escaping @Sendable (BluejayError) -> Void, done: @escaping @Sendable () -> Bool) {
        self.id = id
        self.name = name
        self.kind = kind
        self.runner = runner
        self.abort = abort
        self.failure = failure
        self.done = done
    }

    /// An operation whose `work` produces a value, run by the runner in a task of its own;
    /// `deliver` receives the outcome once.
    static func make<T: Sendable>(
        id: UInt64, name: String, kind: OperationKind,
        work: @escaping @Sendable () async throws -> T,
        deliver: @escaping @Sendable (Result<T, BluejayError>) -> Void
    ) -> QueuedOperation {
        let outcome = OneShot(deliver)
        let abort = AbortSignal()
        return QueuedOperation(id: id, name: name, kind: kind, runner: .task(reporting(work, name: name, outcome: outcome, abort: abort)),
                               abort: abort, failure: { outcome.deliver(.failure($0)) }, done: { outcome.isDone })
    }

    /// An operation whose work may begin without a task (``Runner/started(begin:otherwise:)``):
    /// `begin` gets the operation's abort signal and the callback for how the work went on,
    /// and returns `false` when it cannot begin so; `work` then runs in a task, as for
    /// ``make(id:name:kind:work:deliver:)``. `deliver` receives the outcome once.
    static func make<T: Sendable>(
        id: UInt64, name: String, kind: OperationKind,
        begin: @escaping @Sendable (AbortSignal, _ next: @escaping @Sendable (StartedProcedure<T>) -> Void) -> Bool,
        work: @escaping @Sendable () async throws -> T,
        deliver: @escaping @Sendable (Result<T, BluejayError>) -> Void
    ) -> QueuedOperation {
        let outcome = OneShot(deliver)
        let abort = AbortSignal()
        let runner = Runner.started(begin: { next in
            guard !outcome.isDone else {
                next(.finished({}))
                return true
            }
            return begin(abort) { started in
                switch started {
                case let .finished(value): next(.finished({ outcome.deliver(.success(value)) }))
                case let .unfinished(rest): next(.unfinished(reporting(rest, name: name, outcome: outcome, abort: abort)))
                }
            }
        }, otherwise: reporting(work, name: name, outcome: outcome, abort: abort))
        return QueuedOperation(id: id, name: name, kind: kind, runner: runner, abort: abort,
                               failure: { outcome.deliver(.failure($0)) }, done: { outcome.isDone })
    }

    /// The body of a task that runs `work` within the operation's abort signal and returns the
    /// report of its outcome (nothing, when the operation had one already).
    private static func reporting<T: Sendable>(_ work: @escaping @Sendable () async throws -> T, name: String,
                                               outcome: OneShot<T>, abort: AbortSignal) -> @Sendable () async -> Report {
        return {
            guard !outcome.isDone else { return {} }
            let result: Result<T, BluejayError>
            do {
                result = .success(try await RequestScope.$current.withValue(RequestScope.current.aborted(by: abort)) { try await work() })
            } catch {
                result = .failure(BluejayError(error, operation: name))
            }
            return { outcome.deliver(result) }
        }
    }

    /// An operation that the calling task runs itself once ``CallerTurn/wait()`` returns.
    static func runByCaller(id: UInt64, name: String, kind: OperationKind) -> QueuedOperation {
        let turn = CallerTurn()
        return QueuedOperation(id: id, name: name, kind: kind, runner: .caller(turn), abort: AbortSignal(),
                               failure: { turn.fail($0) }, done: { turn.isSettled })
    }

    /// Reports `error` as the operation's outcome unless it has had one, and lets go of what
    /// its work waits for.
    func fail(_ error: BluejayError) {
        failure(error)
        abort.abort(with: error)
    }

    /// Whether the outcome has been delivered.
    var isFinished: Bool { done() }

    var description: String { "#\(id) \(name)" }
}

/// The turn of an operation its caller runs: the caller waits for it, the runner grants it
/// (or refuses it, when the operation fails while queued), and the operation's outcome is the
/// first of the caller's own result (``settle(_:)``) and a failure from outside
/// (cancellation, a disconnection, cancelEverything).
final class CallerTurn: Sendable {
    private enum Turn {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case granted
        case refused
    }

    private enum Outcome {
        case open
        case failed(BluejayError)
        case settled
    }

    private struct State {
        var turn = Turn.pending
        var outcome = Outcome.open
    }

    private let state = Mutex(State())

    /// Whether the operation has its outcome.
    var isSettled: Bool {
        state.withLock { state in
            if case .open = state.outcome { return false }
            return true
        }
    }

    /// Returns `true` once the turn has come (the caller runs the work, then tells the runner
    /// it finished), `false` when the operation failed before (the caller just reports it).
    func wait() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard case .pending = state.turn else { return true }
                state.turn = .waiting(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        return state.withLock { state in
            if case .granted = state.turn { return true }
            return false
        }
    }

    /// The runner's go.
    func grant() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.turn = .granted }
            if case let .waiting(continuation) = state.turn { return continuation }
            return nil
        }
        waiting?.resume()
    }

    /// Ends the operation with `error`, unless it has its outcome. Before the turn was granted,
    /// the turn is refused.
    func fail(_ error: BluejayError) {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if case .open = state.outcome { state.outcome = .failed(error) }
            switch state.turn {
            case .pending:
                state.turn = .refused
                return nil
            case let .waiting(continuation):
                state.turn = .refused
                return continuation
            case .granted, .refused:
                return nil
            }
        }
        waiting?.resume()
    }

    /// The caller's work returned `result` (`nil`: it did not run): the outcome, unless a
    /// failure came first.
    func settle<T: Sendable>(_ result: Result<T, BluejayError>?) -> Result<T, BluejayError> {
        let failure = state.withLock { state -> BluejayError? in
            switch state.outcome {
            case let .failed(error): return error
            case .open, .settled:
                state.outcome = .settled
                return nil
            }
        }
        if let failure { return .failure(failure) }
        return result ?? .failure(.cancelled)
    }
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
