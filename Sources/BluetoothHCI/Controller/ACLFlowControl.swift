import DequeModule

/// The host side of LE ACL data flow control (Core 6.0, Vol 4, Part E, 4.1.1): the controller
/// has a fixed number of buffers; each packet sent takes one, each Number Of Completed
/// Packets entry gives them back. A plain state machine: no I/O.
struct ACLFlowControl<Completion: Sendable>: Sendable {
    struct Fragment: Sendable {
        var connectionHandle: UInt16
        var packet: [UInt8]
        /// Set on the last fragment of a PDU: called once it is handed to the controller.
        var completion: Completion?
    }

    private(set) var totalBuffers = 0
    private(set) var freeBuffers = 0
    private var queue: Deque<Fragment> = []
    private var inFlight: [UInt16: Int] = [:]

    var queuedCount: Int { queue.count }
    func inFlightCount(connectionHandle: UInt16) -> Int { inFlight[connectionHandle] ?? 0 }

    /// Sets the controller's buffer count (from LE Read Buffer Size); returns what may be sent.
    mutating func configure(bufferCount: Int) -> [Fragment] {
        let used = totalBuffers - freeBuffers
        totalBuffers = bufferCount
        freeBuffers = max(0, bufferCount - used)
        return release()
    }

    /// Queues the fragments of one PDU; returns the fragments that may be written now.
    mutating func submit(_ fragments: [Fragment]) -> [Fragment] {
        queue.append(contentsOf: fragments)
        return release()
    }

    /// Number Of Completed Packets for one connection.
    mutating func complete(connectionHandle: UInt16, count: Int) -> [Fragment] {
        let outstanding = inFlight[connectionHandle] ?? 0
        // A controller may report packets we never sent (or a stale handle): never let the
        // free count exceed the total.
        let credited = min(count, outstanding)
        inFlight[connectionHandle] = outstanding - credited == 0 ? nil : outstanding - credited
        freeBuffers = min(totalBuffers, freeBuffers + credited)
        return release()
    }

    /// After Disconnection Complete the host shall assume the controller flushed the
    /// connection's packets and freed their buffers (Core 6.0, Vol 4, Part E, 7.7.5).
    /// Returns the fragments dropped from the queue and the ones that may be written now.
    mutating func disconnect(connectionHandle: UInt16) -> (dropped: [Fragment], send: [Fragment]) {
        freeBuffers = min(totalBuffers, freeBuffers + (inFlight.removeValue(forKey: connectionHandle) ?? 0))
        var dropped: [Fragment] = []
        queue.removeAll { fragment in
            guard fragment.connectionHandle == connectionHandle else { return false }
            dropped.append(fragment)
            return true
        }
        return (dropped, release())
    }

    /// Empties the queue, for when the transport closes.
    mutating func removeAll() -> [Fragment] {
        let all = Array(queue)
        queue.removeAll()
        inFlight.removeAll()
        freeBuffers = totalBuffers
        return all
    }

    private mutating func release() -> [Fragment] {
        var ready: [Fragment] = []
        while freeBuffers > 0, let next = queue.popFirst() {
            freeBuffers -= 1
            inFlight[next.connectionHandle, default: 0] += 1
            ready.append(next)
        }
        return ready
    }
}
