import DequeModule

/// The host side of LE ACL data flow control (Core 6.0, Vol 4, Part E, 4.1.1): the controller
/// has a fixed number of buffers; each packet sent takes one, each Number Of Completed
/// Packets entry gives them back. A plain state machine: no I/O.
///
/// Each connection has its own queue, and the queues take turns at free buffers one packet
/// at a time, so a link streaming long PDUs never holds up another link's short answer. Two
/// limits keep one link from hurting the others:
/// - while more than one link has sent data, no link holds more than all buffers but one, so
///   a link whose peer stops acknowledging (its buffers never come back until the link ends)
///   cannot take every buffer;
/// - a link's queue holds at most ``queuedByteLimit`` bytes: a PDU that would pass it is
///   refused (a peer that asks faster than its link drains, such as a central that keeps
///   sending reads while withholding acknowledgements, cannot make us queue answers forever).
struct ACLFlowControl<Completion: Sendable>: Sendable {
    struct Fragment: Sendable {
        var connectionHandle: UInt16
        var packet: [UInt8]
        /// Set on the last fragment of a PDU: called once it is handed to the controller.
        var completion: Completion?
    }

    /// A PDU refused because its connection's queue is full.
    struct QueueFull: Error, Equatable {
        var connectionHandle: UInt16
    }

    /// The default of ``queuedByteLimit``: 64 KiB, a little more than the largest L2CAP PDU.
    static var defaultQueuedByteLimit: Int { 64 * 1024 }

    /// One connection's side of the flow control.
    private struct Link: Sendable {
        var queue: Deque<Fragment> = []
        var queuedBytes = 0
        var inFlight = 0
        /// Fragments taken for the link so far, and those the controller reported completed.
        var submitted: UInt64 = 0
        var completed: UInt64 = 0
    }

    private(set) var totalBuffers = 0
    private(set) var freeBuffers = 0
    /// The most bytes one connection may have waiting for buffers. A PDU is refused when it
    /// would pass the limit; one PDU is always taken when the queue is empty, whatever its size.
    let queuedByteLimit: Int
    /// PDUs refused so far because their connection's queue was full.
    private(set) var refusedCount = 0
    /// Every connection that sent data since its link came up (removed when it ends).
    private var links: [UInt16: Link] = [:]
    /// The connections with fragments queued, in the order they take their turns.
    private var turns: Deque<UInt16> = []

    init(queuedByteLimit: Int = Self.defaultQueuedByteLimit) {
        self.queuedByteLimit = max(1, queuedByteLimit)
    }

    var queuedCount: Int { links.values.reduce(0) { $0 + $1.queue.count } }
    func queuedBytes(connectionHandle: UInt16) -> Int { links[connectionHandle]?.queuedBytes ?? 0 }
    func inFlightCount(connectionHandle: UInt16) -> Int { links[connectionHandle]?.inFlight ?? 0 }
    /// How many fragments were taken for the link so far, and how many of them completed.
    func progress(connectionHandle: UInt16) -> (submitted: UInt64, completed: UInt64) {
        links[connectionHandle].map { ($0.submitted, $0.completed) } ?? (0, 0)
    }

    /// The most buffers one connection may hold: all of them while it is the only link that
    /// sends, all but one once another link has sent too.
    var perConnectionLimit: Int { links.count > 1 ? max(1, totalBuffers - 1) : totalBuffers }

    /// Sets the controller's buffer count (from LE Read Buffer Size); returns what may be sent.
    mutating func configure(bufferCount: Int) -> [Fragment] {
        let used = totalBuffers - freeBuffers
        totalBuffers = max(0, bufferCount)
        freeBuffers = max(0, totalBuffers - used)
        return release()
    }

    /// Queues the fragments of one PDU (all for one connection); returns the fragments that
    /// may be written now. Throws ``QueueFull`` (and queues nothing) when the connection's
    /// queue cannot take the PDU.
    mutating func submit(_ fragments: [Fragment]) throws(QueueFull) -> [Fragment] {
        guard let handle = fragments.first?.connectionHandle else { return [] }
        let bytes = fragments.reduce(0) { $0 + $1.packet.count }
        let queued = links[handle]?.queuedBytes ?? 0
        if queued > 0, queued + bytes > queuedByteLimit {
            refusedCount += 1
            throw QueueFull(connectionHandle: handle)
        }
        // In place (the `default:` subscript), so the queue's storage is never copied.
        let wasIdle = links[handle, default: Link()].queue.isEmpty
        links[handle, default: Link()].queue.append(contentsOf: fragments)
        links[handle, default: Link()].queuedBytes += bytes
        links[handle, default: Link()].submitted += UInt64(fragments.count)
        if wasIdle { turns.append(handle) }
        return release()
    }

    /// Number Of Completed Packets for one connection.
    mutating func complete(connectionHandle: UInt16, count: Int) -> [Fragment] {
        guard let inFlight = links[connectionHandle]?.inFlight else { return [] }
        // A controller may report packets we never sent (or a stale handle): never let the
        // free count exceed the total.
        let credited = min(max(0, count), inFlight)
        links[connectionHandle, default: Link()].inFlight -= credited
        links[connectionHandle, default: Link()].completed += UInt64(credited)
        freeBuffers = min(totalBuffers, freeBuffers + credited)
        return release()
    }

    /// After Disconnection Complete the host shall assume the controller flushed the
    /// connection's packets and freed their buffers (Core 6.0, Vol 4, Part E, 7.7.5).
    /// Returns the fragments dropped from the queue and the ones that may be written now.
    mutating func disconnect(connectionHandle: UInt16) -> (dropped: [Fragment], send: [Fragment]) {
        guard let link = links.removeValue(forKey: connectionHandle) else { return ([], []) }
        freeBuffers = min(totalBuffers, freeBuffers + link.inFlight)
        if !link.queue.isEmpty { turns.removeAll { $0 == connectionHandle } }
        return (Array(link.queue), release())
    }

    /// Empties the queues, for when the transport closes.
    mutating func removeAll() -> [Fragment] {
        var all: [Fragment] = []
        for handle in turns { all += links[handle]?.queue ?? [] }
        links.removeAll()
        turns.removeAll()
        freeBuffers = totalBuffers
        return all
    }

    /// Hands free buffers to the queued connections in turn, one packet per turn, skipping a
    /// connection that holds its limit already.
    private mutating func release() -> [Fragment] {
        var ready: [Fragment] = []
        let limit = perConnectionLimit
        // Connections passed over in a row because they hold their limit: once every queued
        // connection was, nothing more can go until buffers come back.
        var passedOver = 0
        while freeBuffers > 0, passedOver < turns.count, let handle = turns.popFirst() {
            guard let inFlight = links[handle]?.inFlight else { continue }
            if inFlight >= limit {
                turns.append(handle)
                passedOver += 1
                continue
            }
            passedOver = 0
            guard let fragment = links[handle, default: Link()].queue.popFirst() else { continue }
            links[handle, default: Link()].queuedBytes -= fragment.packet.count
            links[handle, default: Link()].inFlight += 1
            freeBuffers -= 1
            if links[handle]?.queue.isEmpty == false { turns.append(handle) }
            ready.append(fragment)
        }
        return ready
    }
}
