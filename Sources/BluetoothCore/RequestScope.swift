/// The bounds of the requests one operation makes on the stack: a deadline and an abort
/// signal, set for the task that runs the operation and honoured by the stack's waits inside
/// it (ATT requests and sends, HCI commands).
///
/// Past the deadline a waiting ATT request lets its caller go (the host's
/// `deadlineExceeded`); once the abort signal fires, every wait in the scope, the current one
/// and any later one, fails at once with the signal's error. Together they bound an operation
/// without cancelling the task that runs it, which may be the app's own.
///
/// ```swift
/// let abort = AbortSignal()
/// let scope = RequestScope.current.limited(to: clock.now + .seconds(5)).aborted(by: abort)
/// try await RequestScope.$current.withValue(scope) {
///     try await connection.gatt.read(characteristic)
/// }
/// ```
public struct RequestScope: Sendable {
    /// The scope of the current task; none (no deadline, no signal) unless one is set.
    @TaskLocal public static var current = RequestScope()

    /// When the operation's waits stop, if ever.
    public var deadline: BluetoothClock.Instant?
    /// What aborts the operation's waits, if anything.
    public var abort: AbortSignal?

    public init(deadline: BluetoothClock.Instant? = nil, abort: AbortSignal? = nil) {
        self.deadline = deadline
        self.abort = abort
    }

    /// This scope with a deadline no later than `deadline` (a nested limit never extends the
    /// outer one).
    public func limited(to deadline: BluetoothClock.Instant) -> RequestScope {
        var scope = self
        scope.deadline = self.deadline.map { min($0, deadline) } ?? deadline
        return scope
    }

    /// This scope, aborted by `signal` instead of the outer signal.
    public func aborted(by signal: AbortSignal) -> RequestScope {
        var scope = self
        scope.abort = signal
        return scope
    }
}
