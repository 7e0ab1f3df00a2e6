import Synchronization

/// A clock whose time moves only when ``advance(by:)`` or ``advance(to:)`` is called: simulated
/// time for tests. Give it to the stack as ``BluetoothClock/manual(_:)``.
///
/// Sleepers (tasks in ``sleep(until:)``) and alarms (callbacks from ``schedule(at:_:)``) wake in
/// deadline order as time passes them, each when the clock reads its own deadline. Alarms
/// run synchronously inside the advance, so that a simulation driven by them (the virtual
/// link) has caught up when the advance returns; sleeping tasks are resumed and go on
/// concurrently, so a test waits for what they do, never for a fixed time.
public final class ManualClock: Sendable {
    /// Identifies an alarm, to cancel it.
    public struct Alarm: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private enum Wake {
        case task(CheckedContinuation<Void, any Error>)
        case alarm(@Sendable () -> Void)
    }

    private struct Entry {
        var deadline: Duration
        var wake: Wake
    }

    private struct SleepWaiter {
        var count: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration
        /// By id, which also orders equal deadlines by the time they were registered.
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var sleepWaiters: [UInt64: SleepWaiter] = [:]

        var sleepingTaskCount: Int {
            entries.values.reduce(0) { count, entry in
                if case .task = entry.wake { return count + 1 }
                return count
            }
        }

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }

        /// Removes and returns the earliest entry due at or before `time`.
        mutating func popEarliest(dueBy time: Duration) -> Entry? {
            var earliest: (id: UInt64, deadline: Duration)?
            for (id, entry) in entries where entry.deadline <= time {
                if let current = earliest, (current.deadline, current.id) <= (entry.deadline, id) { continue }
                earliest = (id, entry.deadline)
            }
            guard let earliest else { return nil }
            return entries.removeValue(forKey: earliest.id)
        }

        /// The waits for sleepers that the sleepers now satisfy.
        mutating func satisfiedSleepWaiters() -> [CheckedContinuation<Void, any Error>] {
            let sleeping = sleepingTaskCount
            let ready = sleepWaiters.filter { $0.value.count <= sleeping }
            for id in ready.keys { sleepWaiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    private let state: Mutex<State>

    /// A clock that reads `now` (zero by default).
    public init(now: Duration = .zero) {
        state = Mutex(State(now: now))
    }

    /// The current time.
    public var now: Duration { state.withLock { $0.now } }

    /// The earliest deadline of a sleeper or an alarm, if any.
    public var nextDeadline: Duration? {
        state.withLock { $0.entries.values.map(\.deadline).min() }
    }

    /// How many tasks are sleeping on the clock now.
    public var sleepingTaskCount: Int { state.withLock { $0.sleepingTaskCount } }

    /// The deadline of every sleeper and alarm, earliest first: lets a test wait until the
    /// very waits it means are armed before it moves time.
    public var deadlines: [Duration] {
        state.withLock { $0.entries.values.map(\.deadline).sorted() }
    }

    // MARK: Moving time

    /// Moves time forward by `duration` (a negative one does nothing), waking every sleeper
    /// and running every alarm due on the way, in deadline order.
    public func advance(by duration: Duration) {
        advance(to: now + max(.zero, duration))
    }

    /// Moves time forward to `time` (never backwards), waking every sleeper and running every
    /// alarm due on the way, in deadline order; alarms scheduled by alarms run too when due.
    public func advance(to time: Duration) {
        while true {
            let due = state.withLock { state -> Entry? in
                guard let entry = state.popEarliest(dueBy: time) else {
                    state.now = max(state.now, time)
                    return nil
                }
                state.now = max(state.now, entry.deadline)
                return entry
            }
            guard let due else { return }
            switch due.wake {
            case let .task(continuation): continuation.resume()
            case let .alarm(action): action()
            }
        }
    }

    /// Moves time to the earliest deadline and wakes what is due then; `false` when nothing
    /// sleeps and no alarm is set.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let next = nextDeadline else { return false }
        advance(to: next)
        return true
    }

    // MARK: Sleeping and alarms

    /// Suspends until the clock reads `deadline` or later; throws `CancellationError` when the
    /// task is cancelled first.
    public func sleep(until deadline: Duration) async throws {
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> (immediate: Result<Void, any Error>?, ready: [CheckedContinuation<Void, any Error>]) in
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.entries[id] = Entry(deadline: deadline, wake: .task(continuation))
                    return (nil, state.satisfiedSleepWaiters())
                }
                outcome.ready.forEach { $0.resume() }
                if let immediate = outcome.immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let entry = state.withLock { $0.entries.removeValue(forKey: id) }
            if case let .task(continuation)? = entry?.wake { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Runs `action` when the clock reaches `deadline`, synchronously inside the advance that
    /// gets there (at once if the deadline has passed and an advance is under way, else at the
    /// next advance). An alarm scheduled for a time that has passed waits for the next advance,
    /// which may never come: a caller that can schedule late (another thread may advance
    /// meanwhile) checks ``now`` after scheduling and acts itself if the deadline is past.
    @discardableResult
    public func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) -> Alarm {
        state.withLock { state in
            let id = state.makeID()
            state.entries[id] = Entry(deadline: deadline, wake: .alarm(action))
            return Alarm(id: id)
        }
    }

    /// Cancels an alarm that has not run; does nothing otherwise.
    public func cancel(_ alarm: Alarm) {
        state.withLock { state in
            if case .alarm? = state.entries[alarm.id]?.wake { state.entries[alarm.id] = nil }
        }
    }

    /// Waits until at least `count` tasks sleep on the clock: a test knows that the work it
    /// started has reached its timer before it moves time. Throws `CancellationError` when the
    /// waiting task is cancelled.
    public func waitForSleepingTasks(_ count: Int = 1) async throws {
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.sleepingTaskCount >= count { return .success(()) }
                    state.sleepWaiters[id] = SleepWaiter(count: count, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.sleepWaiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
