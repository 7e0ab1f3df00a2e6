import BluetoothCore
import BluetoothHost

/// Runs `body` with a time limit on `clock`: when `limit` passes before `body` is done,
/// ``BluejayError/timedOut(operation:after:)`` is thrown. `nil` means no limit. Cancellation
/// of the calling task throws ``BluejayError/cancelled``.
///
/// The limit is not a timer of its own racing the ATT bearer's: it is handed down as the
/// task's ``ATTDeadline``, which the bearer's one watchdog keeps together with the 30 s
/// transaction timeout. A request past the deadline lets go of its caller at once and keeps
/// the bearer until its response (Core 6.0, Vol 3, Part F, 3.3.2), so the queue goes on.
func withTimeLimit<T: Sendable>(_ limit: Duration?, clock: BluetoothClock, operation: String,
                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    do {
        guard let limit else { return try await body() }
        return try await ATTDeadline.$current.withValue(clock.now + limit) {
            do {
                return try await body()
            } catch HostError.deadlineExceeded, BluejayError.host(.deadlineExceeded) {
                throw BluejayError.timedOut(operation: operation, after: limit)
            }
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
