@testable import Bluejay
import BluetoothCore
import Foundation
import Synchronization
import Testing

/// Records what the operations of a test did.
final class Journal: Sendable {
    private let entries = Mutex<[String]>([])
    private let concurrency = Mutex((current: 0, maximum: 0))

    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }

    func enter() { concurrency.withLock { $0.current += 1; $0.maximum = max($0.maximum, $0.current) } }
    func leave() { concurrency.withLock { $0.current -= 1 } }
    var maximumConcurrency: Int { concurrency.withLock { $0.maximum } }
}

@Suite("Operation runner", .timeLimit(.minutes(1)))
struct OperationRunnerTests {
    /// An operation that records its steps; it holds at `gate` (when given) until the test
    /// opens it, and otherwise yields once, so that nothing depends on how long it sleeps.
    private func operation(_ runner: OperationRunner, _ name: String, journal: Journal, gate: TestGate? = nil,
                           kind: OperationKind = .gatt, completions: AwaitableLog<String>? = nil) -> QueuedOperation {
        QueuedOperation.make(id: runner.makeID(), name: name, kind: kind, work: {
            journal.enter()
            journal.add("start \(name)")
            defer { journal.leave() }
            if let gate {
                try await gate.wait()
            } else {
                await Task.yield()
            }
            journal.add("end \(name)")
            return name
        }, deliver: { result in
            switch result {
            case let .success(value): journal.add("done \(value)")
            case let .failure(error): journal.add("failed \(name): \(error)")
            }
            completions?.append(name)
        })
    }

    @Test("Operations run one at a time, in order, each reporting once")
    func fifo() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        for name in ["a", "b", "c"] { runner.submit(operation(runner, name, journal: journal)) }
        try await waitUntil("three completions") { journal.all.filter { $0.hasPrefix("done") }.count == 3 }
        #expect(journal.all == ["start a", "end a", "done a", "start b", "end b", "done b", "start c", "end c", "done c"])
        #expect(journal.maximumConcurrency == 1)
    }

    @Test("The queue's log gets each line as a closure: read, the lines say queued, running and finished; unread, none is made")
    func logLines() async throws {
        let lines = Mutex<[String]>([])
        let reader = OperationRunner { message in lines.withLock { $0.append(message()) } }
        let journal = Journal()
        reader.submit(operation(reader, "a", journal: journal))
        try await waitUntil("the completion") { journal.all.contains("done a") }
        try await waitUntil("three lines") { lines.withLock { $0.count } == 3 }
        #expect(lines.withLock { $0 } == ["queued #1 a (1 in queue)", "running #1 a", "finished #1 a"])

        // A log that does not read its lines (debug logging off) never has them made.
        let offered = Mutex(0)
        let skipper = OperationRunner { _ in offered.withLock { $0 += 1 } }
        skipper.submit(operation(skipper, "b", journal: journal))
        try await waitUntil("the completion") { journal.all.contains("done b") }
        try await waitUntil("three lines offered") { offered.withLock { $0 } == 3 }
    }

    @Test("Submitting from many threads at once keeps one running at a time")
    func threadSafety() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let completions = AwaitableLog<String>()
        // Ten threads of their own submit five each: the test's task never blocks a thread of
        // the cooperative pool (which a loaded run shares with every other test), and the wait
        // below is woken by the fiftieth completion instead of polling.
        let submitters = (0..<10).map { thread in
            Thread {
                for index in 0..<5 {
                    runner.submit(operation(runner, "\(thread * 5 + index)", journal: journal, completions: completions))
                }
            }
        }
        submitters.forEach { $0.start() }
        let done = try #require(await completions.wait(forCount: 50, timeout: .seconds(50)), "fifty completions")
        #expect(Set(done).count == 50)
        #expect(journal.all.filter { $0.hasPrefix("done") }.count == 50)
        #expect(journal.maximumConcurrency == 1)
    }

    @Test("A cancelled waiting operation never runs; its callback gets the error")
    func cancelWaiting() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let gate = TestGate()
        runner.submit(operation(runner, "a", journal: journal, gate: gate))
        let b = operation(runner, "b", journal: journal)
        runner.submit(b)
        runner.submit(operation(runner, "c", journal: journal))
        try await gate.waitForArrivals(1)
        runner.cancel(b.id)
        gate.open()
        try await waitUntil("c done") { journal.all.contains("done c") }
        #expect(journal.all.contains("failed b: cancelled"))
        #expect(!journal.all.contains("start b"))
    }

    @Test("A cancelled running operation reports at once; the next starts only after it returned")
    func cancelRunning() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let a = operation(runner, "a", journal: journal, gate: TestGate())
        runner.submit(a)
        runner.submit(operation(runner, "b", journal: journal))
        try await waitUntil("a started") { journal.all.contains("start a") }
        runner.cancel(a.id, error: .timedOut(operation: "a", after: .seconds(1)))
        try await waitUntil("b done") { journal.all.contains("done b") }
        let entries = journal.all
        #expect(entries.contains("failed a: a timed out after 1.0 s"))
        #expect(!entries.contains("end a"), "the work was cancelled")
        #expect(journal.maximumConcurrency == 1)
    }

    @Test("failAll fails only the matching operations")
    func failAllWithPredicate() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let gate = TestGate()
        runner.submit(operation(runner, "scan", journal: journal, gate: gate, kind: .scan))
        runner.submit(operation(runner, "read", journal: journal))
        runner.submit(operation(runner, "disconnect", journal: journal, kind: .disconnect))
        try await gate.waitForArrivals(1)
        runner.failAll(.notConnected) { $0.kind == .gatt }
        gate.open()
        try await waitUntil("disconnect done") { journal.all.contains("done disconnect") }
        #expect(journal.all.contains("failed read: not connected to a peripheral"))
        #expect(journal.all.contains("done scan"))
        #expect(!journal.all.contains("start read"))
    }

    @Test("Cancelling the awaiting task cancels a queued operation")
    func taskCancellation() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let gate = TestGate()
        runner.submit(operation(runner, "blocker", journal: journal, gate: gate))
        try await gate.waitForArrivals(1)
        let task = Task {
            try await runner.perform("queued", kind: .gatt) {
                journal.add("queued ran")
                return 1
            }
        }
        try await waitUntil("queued") { runner.count == 2 }
        task.cancel()
        let result = await task.result
        #expect(throws: BluejayError.cancelled) { try result.get() }
        gate.open()
        try await waitUntil("blocker done") { journal.all.contains("done blocker") }
        try await waitUntil("the queue empty") { runner.count == 0 }
        #expect(!journal.all.contains("queued ran"))
    }

    @Test("An identifier cancelled before its operation is submitted is refused")
    func earlyCancellation() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let op = operation(runner, "early", journal: journal)
        runner.cancel(op.id)
        runner.submit(op)
        try await waitUntil("early failed") { journal.all.contains("failed early: cancelled") }
        #expect(!journal.all.contains("start early"))
    }

    /// Waits, as the stack's waits do, until the task's request scope is aborted; throws its error.
    private func waitForAbort(journal: Journal, _ name: String) async throws {
        guard let abort = RequestScope.current.abort else { throw CancellationError() }
        let waiter = OneShotContinuation()
        let registration = abort.whenAborted { waiter.resume(with: .failure($0)) }
        defer { if let registration { abort.remove(registration) } }
        journal.add("waiting \(name)")
        try await withCheckedThrowingContinuation { continuation in
            waiter.set(continuation)
            if registration == nil, let error = abort.error { waiter.resume(with: .failure(error)) }
        }
    }

    @Test("An operation its caller runs takes its turn in the queue like the others")
    func callerRunsInTurn() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let gate = TestGate()
        runner.submit(operation(runner, "a", journal: journal, gate: gate))
        try await gate.waitForArrivals(1)
        let caller = Task {
            try await runner.perform("b", kind: .gatt) {
                journal.enter()
                defer { journal.leave() }
                journal.add("start b")
                return "b"
            }
        }
        try await waitUntil("b queued") { runner.count == 2 }
        runner.submit(operation(runner, "c", journal: journal))
        #expect(!journal.all.contains("start b"), "b waits for a")
        gate.open()
        #expect(try await caller.value == "b")
        try await waitUntil("c done") { journal.all.contains("done c") }
        #expect(journal.all == ["start a", "end a", "done a", "start b", "start c", "end c", "done c"])
        #expect(journal.maximumConcurrency == 1)
    }

    @Test("A caller's running operation failed from outside reports at once; its waits are aborted")
    func callerOperationFailedFromOutside() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let caller = Task {
            try await runner.perform("read", kind: .gatt) {
                try await waitForAbort(journal: journal, "read")
                journal.add("read ran on")
                return 1
            }
        }
        try await waitUntil("read waiting") { journal.all.contains("waiting read") }
        runner.submit(operation(runner, "next", journal: journal))
        runner.failAll(.notConnected) { $0.kind == .gatt && $0.name == "read" }
        let result = await caller.result
        #expect(throws: BluejayError.notConnected) { try result.get() }
        #expect(!journal.all.contains("read ran on"))
        try await waitUntil("next done") { journal.all.contains("done next") }
    }

    @Test("Cancelling the caller's task while its operation runs reports cancelled and aborts its waits")
    func callerCancelledWhileRunning() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let caller = Task {
            try await runner.perform("read", kind: .gatt) {
                try await waitForAbort(journal: journal, "read")
                return 1
            }
        }
        try await waitUntil("read waiting") { journal.all.contains("waiting read") }
        caller.cancel()
        let result = await caller.result
        #expect(throws: BluejayError.cancelled) { try result.get() }
        try await waitUntil("the queue empty") { runner.count == 0 }
    }

    @Test("An operation run in a task of its own is aborted too when it fails from outside")
    func taskOperationAborted() async throws {
        let runner = OperationRunner()
        let journal = Journal()
        let op = QueuedOperation.make(id: runner.makeID(), name: "write", kind: .gatt, work: {
            try await waitForAbort(journal: journal, "write")
            journal.add("write ran on")
        }, deliver: { result in
            if case let .failure(error) = result { journal.add("failed write: \(error)") }
        })
        runner.submit(op)
        try await waitUntil("write waiting") { journal.all.contains("waiting write") }
        runner.cancel(op.id, error: .notConnected)
        try await waitUntil("the queue empty") { runner.count == 0 }
        #expect(journal.all.contains("failed write: not connected to a peripheral"))
        #expect(!journal.all.contains("write ran on"))
    }

    @Test("An outcome is reported once its operation has left the queue: a request its completion queues starts at once, on that thread")
    func completionFindsTheQueueFree() async throws {
        let runner = OperationRunner()
        let firstID = runner.makeID()
        let (seen, report) = AsyncStream<(firstGone: Bool, secondStartedHere: Bool)>.makeStream()
        runner.submit(QueuedOperation.make(id: firstID, name: "first", kind: .gatt, work: {
            await Task.yield()
            return 1
        }, deliver: { _ in
            let completionThread = pthread_self()
            let firstGone = !runner.contains(firstID)
            let startedHere = Mutex(false)
            // Without waiting in the queue, the second starts inside submit, on this thread
            // (Task.immediate); behind a first not yet finished it would start later, elsewhere.
            runner.submit(QueuedOperation.make(id: runner.makeID(), name: "second", kind: .gatt, work: {
                startedHere.withLock { $0 = pthread_equal(pthread_self(), completionThread) != 0 }
                return 2
            }, deliver: { _ in }))
            report.yield((firstGone, startedHere.withLock { $0 }))
            report.finish()
        }))
        var iterator = seen.makeAsyncIterator()
        let observed = try #require(await iterator.next())
        #expect(observed.firstGone)
        #expect(observed.secondStartedHere)
    }

    @Test("A suspended runner holds operations until resumed")
    func suspension() async throws {
        let runner = OperationRunner(suspended: true)
        let journal = Journal()
        runner.submit(operation(runner, "a", journal: journal))
        #expect(runner.runningKind == nil, "nothing starts while suspended")
        #expect(runner.count == 1)
        runner.resume()
        try await waitUntil("a done") { journal.all.contains("done a") }
    }
}
