import BluetoothCore

extension OperationRunner {
    /// Queues an app's ``PeripheralOperation`` as a GATT operation run in a task of its own, on
    /// the link `link` gives when its turn comes, within its time limit (or `defaultLimit`).
    /// `deliver` gets the outcome once, at once when the operation is ended from outside.
    func submit<Operation: PeripheralOperation>(_ operation: Operation, id: UInt64, defaultLimit: Duration?, clock: BluetoothClock,
                                                link: @escaping @Sendable () throws -> PeripheralLink,
                                                deliver: @escaping @Sendable (Result<Operation.Output, BluejayError>) -> Void) {
        let name = operation.name
        let limit = operation.timeout.map(\.duration) ?? defaultLimit
        let queued = QueuedOperation.make(id: id, name: name, kind: .gatt, work: { [self] in
            let link = try link()
            // Ended from outside (this operation's failure fires its abort signal): the app lets go.
            let signal = RequestScope.current.abort
            let registration = signal?.whenAborted { error in operation.abort(because: BluejayError(error, operation: name)) }
            defer { if let registration { signal?.remove(registration) } }
            // The deadline ends the stack's waits; the timer ends the app's own ones (it fails
            // the operation, which fires the signal and cancels this task).
            let timer = limit.map { limit in
                Task { [self] in
                    guard await sleepUnlessCancelled(limit, clock: clock) else { return }
                    self.cancel(id, error: .timedOut(operation: name, after: limit))
                }
            }
            defer { timer?.cancel() }
            return try await withTimeLimit(limit, clock: clock, operation: name) {
                try await operation.start(on: OperationPeripheral(link: link))
            }
        }, deliver: deliver)
        submit(queued)
    }

    /// ``submit(_:id:defaultLimit:clock:link:deliver:)``, awaited: cancelling the calling task
    /// cancels the operation.
    func run<Operation: PeripheralOperation>(_ operation: Operation, defaultLimit: Duration?, clock: BluetoothClock,
                                             link: @escaping @Sendable () throws -> PeripheralLink) async throws(BluejayError) -> Operation.Output {
        let id = makeID()
        let result: Result<Operation.Output, BluejayError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Operation.Output, BluejayError>, Never>) in
                guard !Task.isCancelled else {
                    continuation.resume(returning: .failure(.cancelled))
                    return
                }
                let once = OneShot<Operation.Output> { continuation.resume(returning: $0) }
                submit(operation, id: id, defaultLimit: defaultLimit, clock: clock, link: link) { once.deliver($0) }
            }
        } onCancel: {
            cancel(id)
        }
        return try result.get()
    }
}
