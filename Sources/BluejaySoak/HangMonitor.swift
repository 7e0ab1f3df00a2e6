import Synchronization

/// Watches every running operation's deadline with one task that looks four times a
/// second, instead of a timer per operation: on Linux a cancelled `Task.sleep` keeps its
/// task and dispatch timer until the time it was to wake up, so a 45-second timer per
/// operation would hold tens of thousands of them (megabytes) in a busy run and blur the
/// memory figures the run is judged by.
final class HangMonitor: Sendable {
    private struct Watched {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var watched: [UInt64: Watched] = [:]
        var nextID: UInt64 = 0
    }

    /// How often the deadlines are checked.
    static let period: Duration = .milliseconds(250)

    private let state = Mutex(State())

    /// Calls `expire` once `deadline` has passed, unless ``unwatch(_:)`` comes first.
    func watch(until deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.watched[state.nextID] = Watched(deadline: deadline, expire: expire)
            return state.nextID
        }
    }

    func unwatch(_ id: UInt64) {
        _ = state.withLock { $0.watched.removeValue(forKey: id) }
    }

    /// Checks the deadlines until cancelled.
    func run() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: Self.period)
            } catch {
                return
            }
            let now = ContinuousClock.now
            let expired = state.withLock { state -> [Watched] in
                let due = state.watched.filter { $0.value.deadline <= now }
                for id in due.keys { state.watched[id] = nil }
                return Array(due.values)
            }
            expired.forEach { $0.expire() }
        }
    }
}
