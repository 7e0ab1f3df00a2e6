/// A transport that records every packet it carries, both ways, in an ``HCICapture``, and
/// otherwise is the transport it wraps. The HCI layer above sees no difference: packets are
/// queued for the capture by reference (the read buffer's slices, no copy) before they are
/// passed on, so the file keeps the order in which the host saw them.
public final class CapturingTransport: HCITransport {
    /// The transport that carries the packets.
    public let base: any HCITransport
    /// Where they are recorded.
    public let capture: HCICapture

    public init(_ base: any HCITransport, capture: HCICapture) {
        self.base = base
        self.capture = capture
    }

    public var name: String { base.name }

    public func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        let capture = capture
        base.start { event in
            switch event {
            case let .packets(packets):
                capture.record(received: packets)
            case .closed:
                // Everything before the end is in the file before anyone learns of the end.
                capture.flush()
            }
            receiver(event)
        }
    }

    public func send(_ packet: H4Packet) throws(TransportError) {
        // Recorded first: an answer the controller sends at once must not come before it.
        capture.record(sent: packet)
        try base.send(packet)
    }

    public func close() {
        base.close()
    }
}
