extension Bluejay {
    /// Queues an app-defined operation on the connected peripheral (see ``PeripheralOperation``);
    /// `completion` gets its outcome on the callback queue.
    public func run<Operation: PeripheralOperation>(_ operation: Operation,
                                                   completion: @escaping @Sendable (Result<Operation.Output, BluejayError>) -> Void) {
        let deliver = onCallbackQueue(completion)
        if let refusal = refusal(for: operation.name) {
            deliver(.failure(refusal))
            return
        }
        runner.submit(operation, id: runner.makeID(), defaultLimit: operationTimeLimit, clock: clock,
                      link: { [self] in try self.requireLink() }, deliver: deliver)
    }

    /// Runs an app-defined operation on the connected peripheral when its turn in the queue
    /// comes (see ``PeripheralOperation``). Cancelling the calling task cancels it.
    public func run<Operation: PeripheralOperation>(_ operation: Operation) async throws(BluejayError) -> Operation.Output {
        if let refusal = refusal(for: operation.name) { throw refusal }
        return try await runner.run(operation, defaultLimit: operationTimeLimit, clock: clock) { [self] in try self.requireLink() }
    }
}
