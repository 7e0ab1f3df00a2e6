/// What a transport reports to the HCI layer above it.
public enum TransportEvent: Sendable {
    /// The packets from the controller that one read completed (one or more), in order. The
    /// receiver handles a batch at once and hands the app one delivery per batch; the packets'
    /// bytes are slices of the read buffer, valid to keep but cheapest when not kept.
    case packets([H4Packet])
    /// The transport is closed; `nil` when it was closed by ``HCITransport/close()``.
    case closed(TransportError?)
}

/// A bidirectional channel of HCI packets between this host and one controller: a socket,
/// a serial port, the Linux HCI user channel, or an in-process virtual controller.
///
/// Contract, relied on by the HCI layer:
/// - ``start(receiver:)`` is called once. The receiver gets packets in the order the
///   controller sent them, in batches (never empty), from one thread at a time, and exactly
///   one `.closed` at the end. What arrives while the receiver runs is kept (as a socket's
///   buffer keeps it) and comes in the next batch, so a receiver that takes its time (the
///   HCI layer's receive coalescing pauses on purpose) gets bigger batches, not a backlog of
///   small ones.
/// - ``send(_:)`` is thread-safe, keeps the order of calls, and never calls the receiver
///   synchronously (so the caller may hold a lock that the receiver also takes).
/// - ``close()`` is idempotent; after it the receiver gets `.closed(nil)` if it has not
///   already been told the transport is gone.
public protocol HCITransport: AnyObject, Sendable {
    /// The specification this transport was opened from, e.g. `tcp:127.0.0.1:9000`.
    var name: String { get }
    func start(receiver: @escaping @Sendable (TransportEvent) -> Void)
    func send(_ packet: H4Packet) throws(TransportError)
    func close()
}
