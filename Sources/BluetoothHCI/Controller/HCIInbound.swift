import BluetoothTransport

/// What the host found in a batch it received (see ``HCIController``'s receive coalescing).
public enum HCIBatchContent: Sendable, Equatable {
    /// Only data a peer pushes unasked (notifications, indications, advertising reports), and
    /// the host waits for no answer: the controller may pause before it reads again.
    case unsolicitedDataOnly
    /// Anything else: read again at once.
    case other
}

/// What the controller sends up to the host, in the order it sent it: events (except the
/// flow-control ones the ``HCIController`` consumes) and whole L2CAP PDUs.
public enum HCIInbound: Sendable {
    case event(HCIEvent)
    /// A reassembled L2CAP PDU, basic header included: a slice of the transport's buffer
    /// when it came in one fragment.
    case l2cap(connectionHandle: UInt16, pdu: ArraySlice<UInt8>)
    /// The transport closed; always the last element.
    case transportClosed(TransportError?)
}
