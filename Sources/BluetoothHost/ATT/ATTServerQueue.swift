import Synchronization

/// The server half of a link's ATT bearer: what the link's peer asked of this device's GATT
/// server (requests and commands, and the link's encryptions with a bond's key), in the
/// link's order, until the server serves it.
///
/// The transport's reader thread puts each PDU straight in, and one task per link serves the
/// queue: a request costs one task wake-up between the reader and the server. Served one at a
/// time, a link's requests keep their order while a handler awaits (Core 6.0, Vol 3, Part F,
/// 3.3.2), and other links are not held up.
///
/// Bounded per link: a client may have one request outstanding, so a long queue is a flood of
/// commands, which ATT lets a server drop, or a client breaking the protocol. Past the limit a
/// PDU is refused (the caller counts and drops it).
final class ATTServerQueue: Sendable {
    /// What became of a PDU offered to the queue.
    enum Admission: Equatable {
        /// Queued. `isFirst`: nobody serves the queue yet; the caller starts its server.
        case queued(isFirst: Bool)
        /// The link has `limit` PDUs waiting already.
        case refused
        /// The link ended: nothing more is served.
        case finished
    }

    private struct State {
        /// PDUs taken and not yet handled (requests waiting here, confirmations on their way).
        var pending = 0
        var isServed = false
        var isFinished = false
    }

    /// The queue's contents, for the one task that serves the link.
    let requests: AsyncStream<ServerRequest>
    private let continuation: AsyncStream<ServerRequest>.Continuation
    private let state = Mutex(State())

    init() {
        (requests, continuation) = AsyncStream.makeStream(of: ServerRequest.self, bufferingPolicy: .unbounded)
    }

    /// Queues `request`; a PDU only while fewer than `limit` wait. With `onlyIfServed`, only
    /// when the queue has been served before (a client wired in memory is taken up by its
    /// bond's state once it has talked).
    func enqueue(_ request: ServerRequest, limit: Int, onlyIfServed: Bool = false) -> Admission {
        state.withLock { state in
            guard !state.isFinished else { return .finished }
            guard !onlyIfServed || state.isServed else { return .finished }
            if case .pdu = request {
                guard state.pending < limit else { return .refused }
                state.pending += 1
            }
            // Under the lock: the reader thread and the host (an encryption) keep their order.
            continuation.yield(request)
            defer { state.isServed = true }
            return .queued(isFirst: !state.isServed)
        }
    }

    /// Counts a PDU that goes around the queue (a confirmation, which must not wait behind a
    /// request), unless `limit` are pending already or the link ended; ``taken()`` when it is
    /// handled.
    func admitBesideQueue(limit: Int) -> Admission {
        state.withLock { state in
            guard !state.isFinished else { return .finished }
            guard state.pending < limit else { return .refused }
            state.pending += 1
            return .queued(isFirst: false)
        }
    }

    /// A PDU was taken out to be handled.
    func taken() {
        state.withLock { $0.pending = max(0, $0.pending - 1) }
    }

    /// PDUs taken and not yet handled.
    var pendingCount: Int { state.withLock { $0.pending } }

    /// Whether the link ended (or its server went): what it still holds is not served.
    var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Ends the queue: nothing more is taken, and its server's task ends.
    func finish() {
        state.withLock { $0.isFinished = true }
        continuation.finish()
    }
}
