import Synchronization

/// Weak references to every component the run made: each Bluejay, each host (central and
/// peripheral, one per start or reboot), its HCI controller and GATT server, each
/// peripheral manager and simulated device, each virtual transport and the link. After
/// shutdown, once the soak has let go of them, every one must be gone: a component still
/// alive is held by something that did not end, typically a task of the stack still
/// running (a run loop, a timer, a waiter never resumed) that captured it.
final class LifetimeRegistry: Sendable {
    private struct Entry: @unchecked Sendable {
        // `@unchecked`: the weak reference is only read and written under the registry's lock.
        weak var object: AnyObject?
        let kind: String
    }

    private struct State: Sendable {
        var entries: [Entry] = []
        var made: [String: Int] = [:]
    }

    private let state = Mutex(State())

    /// Follows `object`, counted under `kind` ("LEHost", "Bluejay", …).
    func track(_ object: AnyObject, as kind: String) {
        state.withLock { state in
            state.made[kind, default: 0] += 1
            // Forget the components already gone, so that the table stays small in a long run.
            if state.entries.count >= 256 { state.entries.removeAll { $0.object == nil } }
            state.entries.append(Entry(object: object, kind: kind))
        }
    }

    /// Components made so far, by kind.
    var madeCounts: [String: Int] { state.withLock { $0.made } }

    /// Components still alive, by kind.
    var aliveCounts: [String: Int] {
        state.withLock { state in
            state.entries.filter { $0.object != nil }.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 }
        }
    }
}
