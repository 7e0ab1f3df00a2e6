import BluetoothCore
import BluetoothHCI

/// Why a credit-based L2CAP channel closed, or why it could not open.
public enum L2CAPChannelError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer refused the channel with this result (Core 6.0, Vol 3, Part A, 4.23 / 4.26).
    case refused(L2CAPCreditBasedConnectionResult)
    /// The peer answered the connection request with Command Reject: it has no credit-based
    /// channels (or not this kind).
    case rejectedByPeer(L2CAPCommandRejectReason)
    /// The peer did not answer the signalling request in time (the RTX timer, Vol 3, Part A, 6.2.1).
    case timeout
    /// The task opening the channel was cancelled before the peer answered. A channel the peer
    /// accepts after that is disconnected as its answer arrives.
    case cancelled
    /// This side closed the channel.
    case closedLocally
    /// The peer closed the channel (L2CAP_DISCONNECTION_REQ).
    case closedByPeer
    /// The link under the channel ended with this reason.
    case disconnected(reason: HCIStatus)
    /// The host's transport to the controller closed.
    case transportClosed
    /// The peer broke the credit-based flow control rules; the channel was disconnected as
    /// Core 6.0, Vol 3, Part A, 3.4.3 and 10.1 require.
    case protocolViolation(L2CAPChannelViolation)
    /// The SDU is longer than the peer's MTU (`length`, `mtu`); nothing was sent.
    case sduTooLong(length: Int, mtu: Int)
    /// An argument is outside what the specification allows.
    case invalidArgument(String)
    /// The PSM already has a server on this host.
    case psmInUse(UInt16)
    /// No dynamic PSM (0x0080…0x00FF) or channel ID (0x0040…0x007F) is free.
    case noResources
    /// The host could not start the procedure (not powered on, link already down, …).
    case host(HostError)

    public var description: String {
        switch self {
        case let .refused(result): return "the peer refused the channel: \(result)"
        case let .rejectedByPeer(reason): return "the peer does not support credit-based channels (Command Reject: \(reason))"
        case .timeout: return "the peer did not answer the channel request in time"
        case .cancelled: return "opening the channel was cancelled"
        case .closedLocally: return "the channel was closed"
        case .closedByPeer: return "the peer closed the channel"
        case let .disconnected(reason): return "the link ended: \(reason)"
        case .transportClosed: return "the HCI transport closed"
        case let .protocolViolation(violation): return "the channel was disconnected: the peer \(violation)"
        case let .sduTooLong(length, mtu): return "an SDU of \(length) bytes is longer than the peer's MTU of \(mtu)"
        case let .invalidArgument(what): return "invalid argument: \(what)"
        case let .psmInUse(psm): return "PSM \(Hex.format(psm)) already has a server"
        case .noResources: return "no free PSM or channel ID"
        case let .host(error): return "\(error)"
        }
    }

    /// Whether the channel ended in order (closed by either side) rather than failed.
    public var isOrderlyClose: Bool { self == .closedLocally || self == .closedByPeer }
}

/// A breach of credit-based flow control by the peer (Core 6.0, Vol 3, Part A, 3.4.3, 4.24, 10.1).
public enum L2CAPChannelViolation: Equatable, Sendable, CustomStringConvertible {
    /// It sent a K-frame while it had no credits left.
    case frameWithoutCredits
    /// It sent a K-frame with a payload longer than our MPS.
    case frameLongerThanMPS(length: Int, mps: Int)
    /// It announced an SDU longer than our MTU.
    case sduLongerThanMTU(length: Int, mtu: Int)
    /// Its K-frames carried more bytes than the SDU Length announced.
    case sduOverrun(expected: Int, received: Int)
    /// A first K-frame was too short to carry the 2-octet SDU Length.
    case missingSDULength
    /// Its credits would take our count past 65535.
    case creditOverflow

    public var description: String {
        switch self {
        case .frameWithoutCredits: return "sent a K-frame without credits"
        case let .frameLongerThanMPS(length, mps): return "sent a K-frame of \(length) bytes, over the MPS of \(mps)"
        case let .sduLongerThanMTU(length, mtu): return "announced an SDU of \(length) bytes, over the MTU of \(mtu)"
        case let .sduOverrun(expected, received): return "sent \(received) bytes for an SDU of \(expected)"
        case .missingSDULength: return "sent a first K-frame without the SDU Length"
        case .creditOverflow: return "gave credits past 65535"
        }
    }
}
