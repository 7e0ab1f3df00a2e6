/// What this side of a credit-based channel offers the peer (Core 6.0, Vol 3, Part A, 4.22).
public struct L2CAPChannelParameters: Sendable, Hashable {
    /// The largest SDU we receive (23…65535; at least 64 on enhanced channels).
    public var mtu: UInt16
    /// The largest K-frame payload we receive (23…65533).
    public var mps: UInt16
    /// The credits the peer holds while our reader keeps up: the receive buffer is at most
    /// this many K-frames (`initialCredits × mps` bytes) plus one SDU being reassembled.
    public var initialCredits: UInt16

    public init(mtu: UInt16 = 2048, mps: UInt16 = 2048, initialCredits: UInt16 = 32) {
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
    }

    /// The smallest MTU and MPS of LE credit-based channels (Vol 3, Part A, 4.22).
    public static let minimumMTU: UInt16 = 23
    public static let maximumMPS: UInt16 = 65533

    /// Why these parameters cannot be offered, or `nil`.
    var violation: String? {
        if mtu < Self.minimumMTU { return "MTU \(mtu) is below 23" }
        if mps < Self.minimumMTU || mps > Self.maximumMPS { return "MPS \(mps) is outside 23…65533" }
        if initialCredits == 0 { return "a channel needs at least one initial credit" }
        return nil
    }
}

/// The link security a channel server requires before it accepts a channel (Core 6.0, Vol 3,
/// Part C, 10.2: LE security mode 1).
public enum L2CAPChannelSecurity: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Any link.
    case none = 0
    /// An encrypted link (unauthenticated pairing is enough).
    case encrypted = 1
    /// An encrypted link whose key came from an authenticated (MITM-protected) pairing.
    case authenticated = 2

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .none: return "none"
        case .encrypted: return "encrypted"
        case .authenticated: return "authenticated"
        }
    }
}
