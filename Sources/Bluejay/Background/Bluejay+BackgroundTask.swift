import BluetoothHost
import Foundation

extension Bluejay {
    /// Runs `backgroundTask` on a thread of its own with a ``SynchronizedPeripheral`` whose
    /// calls block until done, then calls `completionOnMainThread` on the callback queue with
    /// the task's return value or the first error it threw.
    ///
    /// While the task runs, the regular API (read, write, listen, scan, connect) fails with
    /// ``BluejayError/backgroundTaskRunning`` (inside the task:
    /// ``BluejayError/regularAPIInBackgroundTask(_:)``); ``disconnect(immediate:completion:)``
    /// and ``cancelEverything(shouldDisconnect:)`` still work and make the blocked call throw.
    /// Needs a connection: fails with ``BluejayError/notConnected`` otherwise.
    public func run<R: Sendable>(backgroundTask: @escaping @Sendable (SynchronizedPeripheral) throws -> R,
                                 completionOnMainThread: @escaping @Sendable (RunResult<R>) -> Void) {
        startBackgroundTask(backgroundTask, completion: completionOnMainThread)
    }

    /// ``run(backgroundTask:completionOnMainThread:)`` with a value handed to the task.
    public func run<UserData: Sendable, R: Sendable>(userData: UserData,
                                                     backgroundTask: @escaping @Sendable (SynchronizedPeripheral, UserData) throws -> R,
                                                     completionOnMainThread: @escaping @Sendable (RunResult<R>) -> Void) {
        startBackgroundTask({ peripheral in try backgroundTask(peripheral, userData) }, completion: completionOnMainThread)
    }

    private func startBackgroundTask<R: Sendable>(_ task: @escaping @Sendable (SynchronizedPeripheral) throws -> R,
                                                  completion: @escaping @Sendable (RunResult<R>) -> Void) {
        let id = runner.makeID()
        let (refusal, queue, peripheral) = state.withLock { state -> (BluejayError?, DispatchQueue, PeripheralIdentifier?) in
            let queue = state.callbackQueue
            guard state.lifecycle == .running else { return (.notStarted, queue, nil) }
            if let background = state.background {
                if let thread = background.thread, pthread_equal(thread, pthread_self()) != 0 {
                    return (.regularAPIInBackgroundTask("run(backgroundTask:)"), queue, nil)
                }
                return (.backgroundTaskRunning, queue, nil)
            }
            guard let link = state.connectedLink else { return (.notConnected, queue, nil) }
            state.background = BackgroundTaskState(id: id)
            return (nil, queue, link.identifier)
        }
        if let refusal {
            queue.async { completion(.failure(refusal)) }
            return
        }
        log(.info, "background task #\(id) started with \(peripheral.map(\.description) ?? "?")")
        let synchronized = SynchronizedPeripheral(bluejay: self, taskID: id)
        let thread = Thread { [self] in
            self.state.withLock { state in
                if state.background?.id == id { state.background?.thread = pthread_self() }
            }
            let result: RunResult<R>
            do {
                result = .success(try task(synchronized))
            } catch {
                result = .failure(error)
            }
            synchronized.invalidate()
            self.state.withLock { state in
                if state.background?.id == id { state.background = nil }
            }
            switch result {
            case .success: self.log(.info, "background task #\(id) finished")
            case let .failure(error): self.log(.info, "background task #\(id) failed: \(error)")
            }
            queue.async { completion(result) }
        }
        thread.name = "bluejay.background-task.\(id)"
        thread.start()
    }
}
