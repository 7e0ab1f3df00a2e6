import BluetoothCore
import BluetoothHost
import Synchronization

/// Runs ``QueuedOperation``s from a ``FIFOQueue``, one at a time: the callback API's in a task
/// of their own (its reads and writes with response begin without one,
/// ``QueuedOperation/Runner/started(begin:otherwise:)``),
/// the `async` API's in their caller's task (``perform(_:kind:atFront:work:)``).
/// Thread-safe: submit and cancel from anywhere. A cancelled or failed operation reports at
/// once (its waits on the stack are aborted); the next operation starts when the failed one's
/// work has actually returned, so that two operations never run together.
final class OperationRunner: Sendable {
    private struct State: Sendable {
        var queue: FIFOQueue<QueuedOperation>
        var task: (id: UInt64, task: Task<Void, Never>)?
        var nextID: UInt64 = 0
        /// Identifiers cancelled before they were submitted (a `Task` cancelled while its
        /// request was being built).
        var cancelledEarly: Set<UInt64> = []
        /// Tasks made to run operations, for tests of the work that begins without one.
        var tasksMade = 0
    }

    private let state: Mutex<State>
    /// Gets each line of the queue's log as a closure, so that a line nobody reads is never
    /// made: three lines per operation (queued, running, finished) would otherwise cost a few
    /// string interpolations and allocations per read.
    private let log: @Sendable (() -> String) -> Void

    init(suspended: Bool = false, log: @escaping @Sendable (() -> String) -> Void = { _ in }) {
        state = Mutex(State(queue: FIFOQueue(suspended: suspended)))
        self.log = log
    }

    /// A fresh operation identifier.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Queues an operation; at the front it runs as soon as the running one (if any) ends.
    func submit(_ operation: QueuedOperation, atFront: Bool = false) {
        let (start, cancelled, depth) = state.withLock { state -> (QueuedOperation?, Bool, Int) in
            if state.cancelledEarly.remove(operation.id) != nil { return (nil, true, state.queue.count) }
            let start = state.queue.enqueue(operation, atFront: atFront)
            return (start, false, state.queue.count)
        }
        if cancelled {
            operation.fail(.cancelled)
            return
        }
        log { "queued \(operation)\(atFront ? " at the front" : "") (\(depth) in queue)" }
        if let start { launch(start, fromSubmitter: true) }
    }

    /// Cancels one operation: removed if waiting, its task cancelled if running. Its callback
    /// gets `error`. An identifier not submitted yet is remembered and refused on submission.
    func cancel(_ id: UInt64, error: BluejayError = .cancelled) {
        enum Found { case waiting(QueuedOperation), running(QueuedOperation, Task<Void, Never>?), none }
        let found = state.withLock { state -> Found in
            if let operation = state.queue.removeWaiting(id) { return .waiting(operation) }
            if let running = state.queue.running, running.id == id {
                return .running(running, state.task?.id == id ? state.task?.task : nil)
            }
            if id > 0, id <= state.nextID { state.cancelledEarly.insert(id) }
            return .none
        }
        switch found {
        case let .waiting(operation):
            log { "cancelled \(operation) before it ran: \(error)" }
            operation.fail(error)
        case let .running(operation, task):
            log { "cancelled running \(operation): \(error)" }
            operation.fail(error)
            task?.cancel()
        case .none:
            break
        }
    }

    /// Fails every operation that matches, waiting or running, with `error`.
    func failAll(_ error: BluejayError, where predicate: @Sendable (QueuedOperation) -> Bool = { _ in true }) {
        let (waiting, running) = state.withLock { state -> ([QueuedOperation], (QueuedOperation, Task<Void, Never>?)?) in
            let waiting = state.queue.removeWaiting(where: predicate)
            var running: (QueuedOperation, Task<Void, Never>?)?
            if let operation = state.queue.running, predicate(operation), !operation.isFinished {
                running = (operation, state.task?.id == operation.id ? state.task?.task : nil)
            }
            return (waiting, running)
        }
        if let (operation, task) = running {
            log { "failing running \(operation): \(error)" }
            operation.fail(error)
            task?.cancel()
        }
        for operation in waiting {
            log { "failing queued \(operation): \(error)" }
            operation.fail(error)
        }
    }

    /// Holds back new starts (requests keep queuing).
    func suspend() {
        state.withLock { $0.queue.suspend() }
    }

    /// Lets requests start again.
    func resume() {
        if let start = state.withLock({ $0.queue.resume() }) { launch(start, fromSubmitter: false) }
    }

    /// The running operation's kind, if one runs.
    var runningKind: OperationKind? { state.withLock { $0.queue.running?.kind } }

    /// How many tasks were made to run operations so far.
    var tasksMade: Int { state.withLock { $0.tasksMade } }

    /// How many operations wait or run.
    var count: Int { state.withLock { $0.queue.count } }

    /// Whether `id` waits or runs.
    func contains(_ id: UInt64) -> Bool { state.withLock { $0.queue.contains(id) } }

    /// The kinds of the waiting and running operations, running first.
    var kinds: [OperationKind] {
        state.withLock { state in
            (state.queue.running.map { [$0.kind] } ?? []) + state.queue.waiting.map(\.kind)
        }
    }

    /// Starts an operation whose turn has come. One run by its caller is told to go. One run in
    /// a task of its own starts on the submitter's thread (`Task.immediate`: no thread handoff
    /// until its first wait) when `fromSubmitter`, and one that begins without a task begins
    /// there; the operation after a finished one starts in a new task instead, so that a run of
    /// operations that finish without waiting never nests, and no work begins on the thread
    /// that finished the last one (a transport's reader thread, for a request begun without a task).
    private func launch(_ operation: QueuedOperation, fromSubmitter: Bool) {
        log { "running \(operation)" }
        switch operation.runner {
        case let .caller(turn):
            turn.grant()
        case let .task(body):
            run(operation, body, immediately: fromSubmitter)
        case let .started(begin, otherwise):
            guard fromSubmitter else {
                // In a task of its own: the work that cannot begin without one runs in it.
                state.withLock { $0.tasksMade += 1 }
                Task { self.begin(operation, begin, otherwise: otherwise) }
                return
            }
            self.begin(operation, begin, otherwise: otherwise)
        }
    }

    private func begin(_ operation: QueuedOperation,
                       _ begin: @Sendable (_ next: @escaping @Sendable (StartedProcedure<QueuedOperation.Report>) -> Void) -> Bool,
                       otherwise: @escaping @Sendable () async -> QueuedOperation.Report) {
        let began = begin { [self] started in
            switch started {
            case let .finished(report):
                didFinish(operation, report: report)
            case let .unfinished(rest):
                // `rest` reports its errors; it does not throw them.
                run(operation, { (try? await rest()) ?? {} }, immediately: false)
            }
        }
        // Work that cannot begin without a task starts in one on this thread, as `.task`'s does
        // from its submitter (this thread is the submitter's, or the launching task's).
        if !began { run(operation, otherwise, immediately: true) }
    }

    /// Runs an operation's `body` in a task of its own (started on this thread until its first
    /// wait when `immediately`), then finishes the operation with the body's report.
    private func run(_ operation: QueuedOperation, _ body: @escaping @Sendable () async -> QueuedOperation.Report, immediately: Bool) {
        let run: @Sendable () async -> Void = { [self] in
            let report = await body()
            self.didFinish(operation, report: report)
        }
        // Counted before it starts: the task may finish, and its completion be seen, before
        // this thread goes on.
        state.withLock { $0.tasksMade += 1 }
        let task = immediately ? Task.immediate(operation: run) : Task(operation: run)
        state.withLock { state in
            // The task may have finished already; then the slot belongs to another operation.
            if state.queue.running?.id == operation.id { state.task = (operation.id, task) }
        }
    }

    /// Marks `operation` finished, then makes its `report` (so that its completion finds the
    /// queue free), then starts the next one (so that completions keep the queue's order).
    private func didFinish(_ operation: QueuedOperation, report: QueuedOperation.Report = {}) {
        let next = state.withLock { state -> QueuedOperation? in
            if state.task?.id == operation.id { state.task = nil }
            return state.queue.finish(operation.id)
        }
        log { "finished \(operation)" }
        report()
        if let next { launch(next, fromSubmitter: false) }
    }
}

extension OperationRunner {
    /// Queues an operation and runs `work` in the calling task when its turn comes; returns
    /// its outcome. No task is made for it, so a request costs no thread handoff of its own.
    ///
    /// Cancelling the calling task cancels the operation, queued or running. A failure from
    /// outside (``cancel(_:error:)``, ``failAll(_:where:)``) is the outcome: the work's waits
    /// on the stack are aborted at once (through the task's ``RequestScope``), and whatever
    /// the work then returns is dropped.
    func perform<T: Sendable>(_ name: String, kind: OperationKind, atFront: Bool = false,
                              work: () async throws -> T) async throws(BluejayError) -> T {
        let operation = QueuedOperation.runByCaller(id: makeID(), name: name, kind: kind)
        guard case let .caller(turn) = operation.runner else { throw .cancelled }
        let result: Result<T, BluejayError>? = await withTaskCancellationHandler {
            if Task.isCancelled {
                operation.fail(.cancelled)
            } else {
                submit(operation, atFront: atFront)
            }
            guard await turn.wait() else { return nil }
            defer { didFinish(operation) }
            // A failure between the go and here: the work does not start.
            guard !operation.isFinished else { return nil }
            do {
                return .success(try await RequestScope.$current.withValue(RequestScope.current.aborted(by: operation.abort)) {
                    try await work()
                })
            } catch {
                return .failure(BluejayError(error, operation: name))
            }
        } onCancel: {
            cancel(operation.id)
        }
        return try turn.settle(result).get()
    }
}
