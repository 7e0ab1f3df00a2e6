import BluetoothCore
import Synchronization

/// The one timer of a host's ATT bearers: each bearer tells it when it next needs a look (its
/// outstanding request's transaction timeout, a waiting caller's deadline); the watchdog
/// sleeps until the earliest of these, asks the bearers that are due, and sleeps again. It
/// ends when no bearer needs a look, so an idle host has no timer, and a host with many
/// connections has one task, not one per connection.
///
/// A watchdog that would wake earlier than needed is left alone: it wakes, finds nothing due,
/// and sleeps until the next look. So a stream of requests costs no timer per request.
final class ATTWatchdog: Sendable {
    private struct State {
        /// The bearers that need a look, and when.
        var due: [ObjectIdentifier: (bearer: ATTBearer, at: BluetoothClock.Instant)] = [:]
        var task: Task<Void, Never>?
        /// When the current task wakes.
        var wake: BluetoothClock.Instant?
        /// Tells the current task from one it replaced.
        var generation: UInt64 = 0
    }

    private let clock: BluetoothClock
    private let state = Mutex(State())

    init(clock: BluetoothClock) {
        self.clock = clock
    }

    deinit {
        state.withLock { $0.task }?.cancel()
    }

    /// `bearer` next needs a look at `wake` (`nil`: not at all). A bearer calls this with its
    /// own lock held, so the latest call is always its latest state.
    func schedule(_ bearer: ATTBearer, at wake: BluetoothClock.Instant?) {
        state.withLock { state in
            state.due[ObjectIdentifier(bearer)] = wake.map { (bearer, $0) }
            guard let earliest = state.due.values.lazy.map(\.at).min() else { return }
            if let current = state.wake, state.task != nil, current <= earliest { return }
            state.task?.cancel()
            state.generation &+= 1
            state.wake = earliest
            let (clock, generation) = (clock, state.generation)
            state.task = Task { [weak self] in
                var wake = earliest
                while true {
                    do { try await clock.sleep(until: wake) } catch { return }
                    guard let next = self?.look(generation: generation) else { return }
                    wake = next
                }
            }
        }
    }

    /// The watchdog woke: the bearers that are due look at their requests (and schedule their
    /// next look); returns when to wake next, or `nil` to end.
    private func look(generation: UInt64) -> BluetoothClock.Instant? {
        let now = clock.now
        let due = state.withLock { state -> [ATTBearer]? in
            guard state.generation == generation else { return nil }
            return state.due.values.filter { $0.at <= now }.map(\.bearer)
        }
        guard let due else { return nil }
        for bearer in due { bearer.watchdogDidWake(at: now) }
        return state.withLock { state -> BluetoothClock.Instant? in
            guard state.generation == generation else { return nil }
            let next = state.due.values.lazy.map(\.at).min()
            state.wake = next
            if next == nil { state.task = nil }
            return next
        }
    }
}
