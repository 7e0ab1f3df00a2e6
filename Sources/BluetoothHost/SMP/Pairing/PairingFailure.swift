/// Why a pairing failed (Core 6.0, Vol 3, Part H).
public enum PairingFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer sent Pairing Failed with this reason.
    case peerFailed(SMPPairingFailureReason)
    /// This device stopped the pairing and told the peer `reason`; `cause` says why.
    indirect case refused(reason: SMPPairingFailureReason, cause: PairingFailure)
    /// An SMP command that does not fit the procedure's state (answered Unspecified Reason).
    case unexpectedPDU(SMPCode)
    /// The peer's features are out of range or contradict the request.
    case invalidFeatures(String)
    /// Secure Connections Only mode and the peer offers legacy pairing only.
    case secureConnectionsRequired
    /// MITM protection is required (asked for, or Secure Connections Only mode) and the
    /// pairing, or the key the link was encrypted with, has none: the IO capabilities allow
    /// only Just Works, or the peer encrypted with an unauthenticated bond.
    case authenticationRequired
    /// The pairing would replace a bond with a weaker key, and the ``PairingAgent`` did not
    /// allow it (``PairingAgent/shouldReplaceBond(_:for:)``). The bond is kept.
    case weakerThanBond(BondReplacement)
    /// Repeated Attempts (Core 6.0, Vol 3, Part H, 2.3.6): a pairing with this peer failed a
    /// moment ago, so none is started or accepted with it for `retryAfter`; or too many Passkey
    /// Entry pairings failed with any peers in the last minute, so one that would use Passkey
    /// Entry is refused for `retryAfter` (then as the cause of
    /// ``refused(reason:cause:)``, the refusal being sent to the peer).
    case repeatedAttempts(retryAfter: Duration)
    /// The negotiated key is shorter than the minimum accepted.
    case keySizeTooSmall(Int)
    /// The peer wants out-of-band authentication and this device has no OOB data.
    case outOfBandUnavailable
    /// The user refused, or typed no valid passkey.
    case userRejected
    /// A confirm value did not match: a wrong passkey, or a device in the middle.
    case confirmValueMismatch
    /// The DHKey check did not match.
    case dhKeyCheckMismatch
    /// The peer's public key is not a point on P-256, or is this device's own key (Vol 3,
    /// Part H, 2.3.5.6.1).
    case invalidPublicKey
    /// A key distribution PDU was malformed or out of place.
    case invalidKeyDistribution(String)
    /// The controller reported that encryption did not start.
    case encryptionFailed
    /// No SMP progress within the Security Manager Timer (30 s, Vol 3, Part H, 3.4).
    case timeout
    /// The app or the host cancelled.
    case cancelled
    /// The link ended during pairing.
    case disconnected

    /// This failure as sent to the peer with `reason`.
    /// This device's own Repeated Attempts refusal: no attempt was made, nothing to count.
    var isRepeatedAttemptsRefusal: Bool {
        if case .refused(reason: .repeatedAttempts, _) = self { return true }
        return false
    }

    func sent(_ reason: SMPPairingFailureReason) -> PairingFailure {
        if case .refused = self { return self }
        return .refused(reason: reason, cause: self)
    }

    /// The SMP reason on the wire, when one was sent or received.
    public var reason: SMPPairingFailureReason? {
        switch self {
        case let .peerFailed(reason), let .refused(reason, _): return reason
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case let .peerFailed(reason): return "the peer failed the pairing: \(reason)"
        case let .refused(reason, cause): return "\(cause) (sent Pairing Failed: \(reason))"
        case let .unexpectedPDU(code): return "unexpected \(code.name)"
        case let .invalidFeatures(what): return "invalid pairing features: \(what)"
        case .secureConnectionsRequired: return "the peer does not support LE Secure Connections, which is required"
        case .authenticationRequired:
            return "MITM protection is required but the pairing cannot give it (the IO capabilities allow only Just Works, or the key is unauthenticated)"
        case let .weakerThanBond(replacement): return "refused: \(replacement); remove the bond first to pair this way"
        case let .repeatedAttempts(wait): return "pairings failed recently (with this peer, or by Passkey Entry with any): try again in \(wait) (Repeated Attempts)"
        case let .keySizeTooSmall(size): return "encryption key size \(size) is below the minimum"
        case .outOfBandUnavailable: return "no out-of-band data for this peer"
        case .userRejected: return "the user refused the pairing"
        case .confirmValueMismatch: return "confirm value mismatch (wrong passkey?)"
        case .dhKeyCheckMismatch: return "DHKey check mismatch"
        case .invalidPublicKey: return "the peer's public key is invalid"
        case let .invalidKeyDistribution(what): return "invalid key distribution: \(what)"
        case .encryptionFailed: return "the link could not be encrypted"
        case .timeout: return "pairing timed out"
        case .cancelled: return "pairing cancelled"
        case .disconnected: return "the link ended during pairing"
        }
    }
}
