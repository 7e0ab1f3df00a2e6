import Dispatch

/// Runs a task's jobs on the app's callback queue (a task executor preference).
///
/// The callback API's GATT operations run in a task that prefers this executor. When the
/// answer to a request arrives, the reader thread then wakes the callback queue directly: the
/// operation finishes there and its completion follows on the same thread, without first
/// waking a thread of the global pool. That is one thread handoff per request, as for the
/// `async` API, instead of two (Benchmarks/README.md, "Where a read's time goes").
///
/// What this changes for an app: the operation after a callback operation in the queue waits
/// for the callback queue to be free, as the completions always did. An app that blocks its
/// callback queue (a semaphore inside a callback waiting for another Bluejay request) stalls
/// its own requests; the seeds' apps, written for the main queue, never block it.
final class CallbackQueueExecutor: TaskExecutor, Sendable {
    let queue: DispatchQueue

    init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
