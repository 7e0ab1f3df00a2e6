/// Runs `body` with a time limit: when `limit` passes first, `body` is cancelled and
/// ``BluejayError/timedOut(operation:after:)`` thrown. `nil` means no limit.
/// Cancellation of the calling task cancels `body` and throws ``BluejayError/cancelled``.
func withTimeLimit<T: Sendable>(_ limit: Duration?, operation: String,
                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    guard let limit else {
        do { return try await body() } catch is CancellationError { throw BluejayError.cancelled }
    }
    do {
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
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

/// Sleeps; `false` when cancelled.
func sleepUnlessCancelled(_ duration: Duration) async -> Bool {
    do {
        try await Task.sleep(for: duration)
        return true
    } catch {
        return false
    }
}
