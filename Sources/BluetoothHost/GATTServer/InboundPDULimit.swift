import Synchronization

/// How many PDUs each link may have taken and not handled yet
/// (``GATTServerSettings/maximumQueuedPDUs``; each link's own count is its bearer's
/// ``ATTServerQueue``), and how many were dropped past it, across links.
final class InboundPDULimit: Sendable {
    private struct State {
        var limit: Int
        var dropped = 0
    }

    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(limit: max(1, limit)))
    }

    /// The most PDUs a link may have waiting.
    var limit: Int { state.withLock { $0.limit } }

    /// PDUs dropped so far.
    var droppedCount: Int { state.withLock { $0.dropped } }

    func setLimit(_ limit: Int) {
        state.withLock { $0.limit = max(1, limit) }
    }

    /// Counts a dropped PDU; `true` for the first of a run (and every thousandth), for the log.
    func countDrop() -> Bool {
        state.withLock { state in
            state.dropped += 1
            return state.dropped == 1 || state.dropped % 1000 == 0
        }
    }
}
