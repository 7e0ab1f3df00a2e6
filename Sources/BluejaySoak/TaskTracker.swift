import Synchronization

/// Every task the soak starts goes through ``spawn(_:_:)``, which counts it alive until its
/// body returns. After shutdown the count must come back to zero: a task still alive then
/// is an operation that ignored cancellation, a listen stream that never ended, or a loop
/// of ours that missed its stop signal. The names of the survivors go in the report.
final class TaskTracker: Sendable {
    private struct State {
        var alive: [UInt64: String] = [:]
        var nextID: UInt64 = 0
        var started = 0
    }

    private let state = Mutex(State())

    /// Starts `body` in a new task, counted while it runs.
    @discardableResult
    func spawn<T: Sendable>(_ name: String, _ body: @escaping @Sendable () async -> T) -> Task<T, Never> {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.started += 1
            state.alive[state.nextID] = name
            return state.nextID
        }
        return Task {
            defer { _ = self.state.withLock { $0.alive.removeValue(forKey: id) } }
            return await body()
        }
    }

    /// Tasks running now.
    var aliveCount: Int { state.withLock { $0.alive.count } }

    /// Tasks started since the beginning.
    var startedCount: Int { state.withLock { $0.started } }

    /// The names of the tasks running now, with how many of each.
    var aliveNames: [String: Int] {
        state.withLock { state in state.alive.values.reduce(into: [:]) { $0[$1, default: 0] += 1 } }
    }
}
