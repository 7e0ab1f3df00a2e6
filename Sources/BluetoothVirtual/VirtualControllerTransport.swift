import BluetoothCore
import BluetoothTransport
import Dispatch
import Synchronization

/// The host's end of a ``VirtualController``: an `HCITransport` like a UART or a socket,
/// so the host cannot tell the controller is simulated.
///
/// It keeps the contract of `HCITransport`: ``send(_:)`` only queues the packet for the
/// link's executor, so the receiver is never called from inside it; the receiver gets the
/// controller's packets in order on the transport's own serial queue, and exactly one
/// `.closed` at the end (`nil` after ``close()``, an error when the controller went away or
/// another host attached to it). Packets the controller sends before ``start(receiver:)``
/// are kept for the receiver. Like a socket's buffer, what the controller sends while the
/// receiver is busy gathers into the next batch.
public final class VirtualControllerTransport: HCITransport {
    /// `virtual:NAME`.
    public let name: String
    /// The controller at the other end.
    public let controller: VirtualController
    private let deliveryQueue: DispatchQueue
    private let state = Mutex(State())

    private struct State {
        var receiver: (@Sendable (TransportEvent) -> Void)?
        var started = false
        /// Sent by the controller and not yet handed to the receiver.
        var pending: [H4Packet] = []
        /// A drain of ``pending`` is queued or running on the delivery queue.
        var isDraining = false
        var isClosed = false
        var closeReason: TransportError?
        var closedDelivered = false
    }

    init(controller: VirtualController) {
        self.controller = controller
        name = "virtual:\(controller.name)"
        deliveryQueue = DispatchQueue(label: "bluejay.virtual-hci.\(controller.name)")
    }

    public func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        state.withLock { state in
            guard !state.started else { return }
            state.started = true
            if state.isClosed {
                // Closed before it started: `.closed` is all the receiver gets, and it is not kept.
                guard !state.closedDelivered else { return }
                state.closedDelivered = true
                let reason = state.closeReason
                deliveryQueue.async { receiver(.closed(reason)) }
                return
            }
            state.receiver = receiver
            if !state.pending.isEmpty { scheduleDrain(&state) }
        }
    }

    /// Queues a packet for the controller. Throws `TransportError/closed(_:)` (or why the
    /// transport ended) once it is closed.
    public func send(_ packet: H4Packet) throws(TransportError) {
        try state.withLock { state throws(TransportError) in
            guard !state.isClosed else { throw state.closeReason ?? .closed(name) }
            // Under the lock, so concurrent senders reach the link in the order they got it.
            controller.link.submit(packet, from: self, to: controller.id)
        }
    }

    /// Detaches from the controller; the receiver then gets `.closed(nil)`. Idempotent, never
    /// blocks, may be called from the receiver.
    public func close() {
        finish(reason: nil)
        controller.link.detach(self, from: controller.id)
    }

    /// Whether the transport has ended.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Returns once every packet handed to the receiver so far has been received.
    func waitUntilDelivered() {
        deliveryQueue.sync {}
    }

    /// Packets from the controller, produced by one step of the link (called on the link's
    /// queue): one batch for the receiver.
    func deliver(_ packets: [H4Packet]) {
        guard !packets.isEmpty else { return }
        state.withLock { state in
            guard !state.isClosed else { return }
            state.pending.append(contentsOf: packets)
            if state.receiver != nil { scheduleDrain(&state) }
        }
    }

    /// Queues a drain unless one is queued or running (that one takes these packets too).
    private func scheduleDrain(_ state: inout State) {
        guard !state.isDraining else { return }
        state.isDraining = true
        deliveryQueue.async { [self] in drain() }
    }

    /// Hands the receiver everything pending as one batch, again and again until nothing is
    /// left: what arrives while the receiver runs makes the next batch.
    private func drain() {
        while true {
            let next = state.withLock { state -> (batch: [H4Packet], receiver: (@Sendable (TransportEvent) -> Void)?)? in
                guard !state.pending.isEmpty, !state.isClosed, let receiver = state.receiver else {
                    state.isDraining = false
                    return nil
                }
                defer { state.pending = [] }
                return (state.pending, receiver)
            }
            guard let next, let receiver = next.receiver else { return }
            receiver(.packets(next.batch))
        }
    }

    /// Ends the transport with `reason` (`nil`: closed by the host).
    func finish(reason: TransportError?) {
        state.withLock { state in
            guard !state.isClosed else { return }
            state.isClosed = true
            state.closeReason = reason
            state.pending.removeAll()
            if let receiver = state.receiver {
                state.closedDelivered = true
                // Let go of the receiver once it has its `.closed`: it usually holds the
                // transport's owner (the HCI layer holds its transport), and the two would
                // otherwise keep each other, the host above and the link alive for good.
                state.receiver = nil
                deliveryQueue.async { receiver(.closed(reason)) }
            }
        }
    }
}
