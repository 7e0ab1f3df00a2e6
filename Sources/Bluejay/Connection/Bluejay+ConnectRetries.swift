import Synchronization

extension Bluejay {
    /// Connects, trying again after timeouts and reconnecting after dropped links a limited
    /// number of times (BlueCap's `connect(timeoutRetries:disconnectRetries:connectionTimeout:)`).
    ///
    /// - An attempt that takes longer than `connectionTimeout` is tried again, up to
    ///   `timeoutRetries` times in a row (each retry reports ``ConnectionEvent/reconnecting(_:)``);
    ///   a connection gives the timeout retries back.
    /// - Once connected, a link that drops unexpectedly is reconnected (as auto-reconnect does,
    ///   the ``DisconnectHandler`` having its say) up to `disconnectRetries` times in all.
    /// - Past either limit Bluejay gives up: ``ConnectionEvent/gaveUp(_:error:)``, the listens
    ///   end, and nothing happens until the app connects again.
    ///
    /// `completion` gets the first connection, or the last attempt's failure (after the give-up,
    /// when it timed out). A later ``connect(_:timeout:warningOptions:completion:)`` goes back to
    /// Bluejay's own auto-reconnect rules.
    public func connect(_ peripheral: PeripheralIdentifier, timeoutRetries: Int, disconnectRetries: Int, connectionTimeout: Timeout,
                        completion: @escaping @Sendable (ConnectionResult) -> Void) {
        let deliver = onCallbackQueue(completion)
        if let refusal = refusal(for: "connect") {
            deliver(.failure(refusal))
            return
        }
        let limits = AutoReconnectPolicy.RetryLimits(timeouts: timeoutRetries, disconnections: disconnectRetries)
        connectRetrying(peripheral, limits: limits, timeout: connectionTimeout, attempts: RetryingConnection(), deliver: deliver)
    }

    /// ``connect(_:timeoutRetries:disconnectRetries:connectionTimeout:completion:)``, awaited.
    /// Cancelling the calling task cancels the attempt in progress and the retries.
    @discardableResult
    public func connect(_ peripheral: PeripheralIdentifier, timeoutRetries: Int, disconnectRetries: Int,
                        connectionTimeout: Timeout) async throws(BluejayError) -> PeripheralIdentifier {
        if let refusal = refusal(for: "connect") { throw refusal }
        let limits = AutoReconnectPolicy.RetryLimits(timeouts: timeoutRetries, disconnections: disconnectRetries)
        let attempts = RetryingConnection()
        let result: ConnectionResult = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ConnectionResult, Never>) in
                guard !Task.isCancelled else {
                    continuation.resume(returning: .failure(.cancelled))
                    return
                }
                let once = OneShot<PeripheralIdentifier> { continuation.resume(returning: $0) }
                connectRetrying(peripheral, limits: limits, timeout: connectionTimeout, attempts: attempts) { once.deliver($0) }
            }
        } onCancel: {
            if let id = attempts.cancel() { runner.cancel(id) }
        }
        return try result.get()
    }

    /// One attempt of a connection with retry limits; a timeout starts the next one at the
    /// front of the queue while timeout retries are left.
    private func connectRetrying(_ peripheral: PeripheralIdentifier, limits: AutoReconnectPolicy.RetryLimits, timeout: Timeout,
                                 attempts: RetryingConnection, deliver: @escaping @Sendable (ConnectionResult) -> Void) {
        let id = runner.makeID()
        let first = attempts.start(id)
        guard let first else {
            deliver(.failure(.cancelled))
            return
        }
        requestConnection(to: peripheral, timeout: timeout, purpose: .request, atFront: !first, id: id,
                          retryLimits: first ? .replace(limits) : .keep) { [self] result in
            guard case let .failure(error) = result, case .connectionTimedOut = error else {
                deliver(result)
                return
            }
            if !attempts.isCancelled, self.state.withLock({ $0.reconnect.retryAfterTimeout() }) {
                self.log(.warning, "connecting to \(peripheral) timed out after \(timeout); trying again (a timeout retry)")
                self.broadcast(.reconnecting(peripheral))
                self.connectRetrying(peripheral, limits: limits, timeout: timeout, attempts: attempts, deliver: deliver)
                return
            }
            self.log(.warning, "connecting to \(peripheral) timed out after \(timeout) and its timeout retries are used up; giving up")
            self.broadcast(.gaveUp(peripheral, error: error))
            deliver(result)
        }
    }
}

/// The attempts of one connection with retry limits: the current one's operation, so that
/// cancelling the caller's task reaches whichever attempt runs.
private final class RetryingConnection: Sendable {
    private struct State {
        var current: UInt64?
        var started = 0
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Records attempt `id`; returns whether it is the first, or `nil` when cancelled.
    func start(_ id: UInt64) -> Bool? {
        state.withLock { state -> Bool? in
            guard !state.cancelled else { return nil }
            state.current = id
            state.started += 1
            return state.started == 1
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Stops the retries; returns the attempt to cancel.
    func cancel() -> UInt64? {
        state.withLock { state in
            state.cancelled = true
            return state.current
        }
    }
}
