import BluetoothCore

/// Runs `body` with a time limit on `clock`: when `limit` passes first, `body` is cancelled
/// and ``BluejayError/timedOut(operation:after:)`` thrown. `nil` means no limit.
/// Cancellation of the calling task cancels `body` and throws ``BluejayError/cancelled``.
func withTimeLimit<T: Sendable>(_ limit: Duration?, clock: BluetoothClock, operation: String,
                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    guard let limit else {
        do { return try await body() } catch is CancellationError { throw BluejayError.cancelled }
    }
    // The deadline is fixed now, however late the timer task starts.
    let deadline = clock.now + limit
    do {
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await clock.sleep(until: deadline)
                throw BluejayError.timedOut(operation: operation, after: limit)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw BluejayError.cancelled }
            return first
        }
    } catch is CancellationError {
        throw BluejayError.cancelled
    }
}

/// Sleeps on `clock`; `false` when cancelled.
func sleepUnlessCancelled(_ duration: Duration, clock: BluetoothClock) async -> Bool {
    do {
        try await clock.sleep(for: duration)
        return true
    } catch {
        return false
    }
}
