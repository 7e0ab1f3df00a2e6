import Synchronization

/// Counts the PDUs the server took from each connection and has not handled yet, so that a
/// client sending faster than the server answers cannot make it queue without end.
///
/// A client may have one request outstanding (Core 6.0, Vol 3, Part F, 3.3.2), so a long
/// queue is either a flood of Write Commands, which ATT lets the server drop, or a client
/// breaking the protocol. Past the limit new PDUs are dropped, counted and logged.
final class InboundPDULimit: Sendable {
    private struct State {
        var limit: Int
        var pending: [UInt16: Int] = [:]
        var dropped = 0
    }

    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(limit: max(1, limit)))
    }

    /// PDUs dropped so far.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// PDUs of a connection taken and not handled yet.
    func pendingCount(connectionHandle: UInt16) -> Int { state.withLock { $0.pending[connectionHandle] ?? 0 } }

    func setLimit(_ limit: Int) {
        state.withLock { $0.limit = max(1, limit) }
    }

    /// Takes a PDU of a connection, or refuses it (returns `false`, counted) at the limit.
    /// The first refusal of a run says so, for the log.
    func admit(connectionHandle: UInt16) -> (admitted: Bool, firstDrop: Bool) {
        state.withLock { state in
            let pending = state.pending[connectionHandle] ?? 0
            guard pending < state.limit else {
                state.dropped += 1
                return (false, state.dropped == 1 || state.dropped % 1000 == 0)
            }
            state.pending[connectionHandle] = pending + 1
            return (true, false)
        }
    }

    /// A PDU of the connection was handled (or discarded with its link).
    func handled(connectionHandle: UInt16) {
        state.withLock { state in
            guard let pending = state.pending[connectionHandle] else { return }
            state.pending[connectionHandle] = pending > 1 ? pending - 1 : nil
        }
    }

    /// The connection ended: what it had queued is gone.
    func reset(connectionHandle: UInt16) {
        state.withLock { _ = $0.pending.removeValue(forKey: connectionHandle) }
    }
}
