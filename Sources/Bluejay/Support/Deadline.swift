import BluetoothCore
import BluetoothHost

/// Runs `body` with a time limit on `clock`: when `limit` passes before `body` is done,
/// ``BluejayError/timedOut(operation:after:)`` is thrown. `nil` means no limit. Cancellation
/// of the calling task throws ``BluejayError/cancelled``.
///
/// The limit is not a timer of its own racing the ATT bearer's: it is the deadline of the
/// task's ``RequestScope`` (keeping the scope's abort signal), which the bearer's one watchdog
/// keeps together with the 30 s transaction timeout. A request past the deadline lets go of
/// its caller at once and keeps the bearer until its response (Core 6.0, Vol 3, Part F, 3.3.2),
/// so the queue goes on.
func withTimeLimit<T: Sendable>(_ limit: Duration?, clock: BluetoothClock, operation: String,
                                _ body: () async throws -> T) async throws -> T {
    try await withDeadline(limit.map { (clock.now + $0, $0) }, operation: operation, body)
}

/// ``withTimeLimit(_:clock:operation:_:)`` with its deadline set already (`limit` names it in
/// the error): the rest of an operation that began without a task.
func withDeadline<T: Sendable>(_ deadline: (at: BluetoothClock.Instant, limit: Duration)?, operation: String,
                               _ body: () async throws -> T) async throws -> T {
    do {
        guard let deadline else { return try await body() }
        return try await RequestScope.$current.withValue(RequestScope.current.limited(to: deadline.at)) {
            do {
                return try await body()
            } catch HostError.deadlineExceeded, BluejayError.host(.deadlineExceeded) {
                throw BluejayError.timedOut(operation: operation, after: deadline.limit)
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
