/// What this host's Security Manager offers and demands when it pairs (Core 6.0, Vol 3,
/// Part H). The defaults pair the way a phone does with a device that has no display: LE
/// Secure Connections when the peer has it, Just Works unless either side asks for MITM
/// protection, bonding, 128-bit keys.
public struct SecurityManagerSettings: Sendable, Hashable {
    /// What this device can show and what its user can type or answer. It decides the pairing
    /// method with the peer's (Vol 3, Part H, 2.3.5.1); the host asks its ``PairingAgent``
    /// for what the method needs.
    public var ioCapability: SMPIOCapability
    /// Ask for bonding: keys are distributed and stored, so later connections encrypt
    /// without pairing again.
    public var bondable: Bool
    /// Refuse a pairing whose method cannot protect against a man in the middle (Just Works).
    public var requiresMITM: Bool
    /// Secure Connections Only mode (Vol 3, Part C, 10.2.4): every pairing and every encryption
    /// is security level 4, LE Secure Connections with an authenticated method and a 128-bit
    /// key. Legacy pairing, Just Works and shorter keys are refused (Pairing Failed with
    /// Authentication Requirements or Encryption Key Size), a bond of a lower level never
    /// encrypts a link (the peer must pair again), and this device asks for MITM protection.
    public var secureConnectionsOnly: Bool
    /// The smallest encryption key accepted, 7…16 octets.
    public var minimumKeySize: Int
    /// The largest key offered, 7…16 octets.
    public var maximumKeySize: Int
    /// Distribute an identity (IRK and identity address) to the peer, so it can resolve this
    /// device's private addresses.
    public var distributesIdentity: Bool
    /// Distribute a signature key (CSRK) for signed writes.
    public var distributesSigningKey: Bool
    /// The Security Manager Timer (Vol 3, Part H, 3.4): a pairing fails when this long passes
    /// after it started or after this device last sent one of its PDUs. What the peer sends
    /// (Keypress Notifications included) does not restart it, and a question to the
    /// ``PairingAgent`` waits no longer.
    public var timeout: Duration
    /// The first wait after a failed pairing before this device starts or accepts another with
    /// the same peer (its identity when known, else its address; Vol 3, Part H, 2.3.6); each
    /// further failure doubles it, up to ``maximumRetryInterval``.
    public var initialRetryInterval: Duration
    public var maximumRetryInterval: Duration
    /// Failed Passkey Entry pairings (those that gave a guess at a secret), with any peers,
    /// after which no Passkey Entry pairing runs until the oldest is ``failedPairingWindow``
    /// old (the other methods stay open): a peer that changes its address for each guess
    /// still meets a bound; Passkey Entry pairings still running count against it too. Other
    /// failures count only against their peer. 0 turns the budget off.
    public var failedPairingBudget: Int
    public var failedPairingWindow: Duration
    /// Central: Security Requests on one link closer together than this are dropped, as is
    /// any while the previous one is being answered (Vol 3, Part H, 2.4.6), so a peripheral
    /// cannot make the host ask its agent over and over.
    public var securityRequestInterval: Duration
    /// Ask for Keypress Notifications (the Keypress flag of AuthReq, Vol 3, Part H, 3.5.1): when
    /// the peer asks too, its user's key presses while typing the passkey this device displays
    /// reach the ``PairingAgent`` (``PairingAgent/keypress(_:for:)``), and when this device's
    /// user types, the peer hears that entry started and completed. They never restart the
    /// Security Manager Timer on this side.
    public var keypressNotifications: Bool
    /// The most bonds this host keeps (for its identity). A pairing with a peer that has no
    /// bond here, once that many are kept, goes on without bonding: the link is encrypted, no
    /// keys are exchanged or stored, and the peer must pair again next time (a pairing during
    /// which another took the last place exchanges keys, and they are not stored). Without it,
    /// any peer that may pair (Just Works is accepted by default) could grow the bond store,
    /// and the work of resolving every private address heard, without end. A bonded peer
    /// pairing again replaces its bond as before. At least 1.
    public var maximumBonds: Int {
        didSet { maximumBonds = max(maximumBonds, 1) }
    }
    /// Offer LE Secure Connections (the SC flag). Off only to test legacy pairing.
    var offersSecureConnections = true

    public init(ioCapability: SMPIOCapability = .noInputNoOutput, bondable: Bool = true, requiresMITM: Bool = false,
                secureConnectionsOnly: Bool = false, minimumKeySize: Int = 7, maximumKeySize: Int = 16,
                distributesIdentity: Bool = true, distributesSigningKey: Bool = true, timeout: Duration = .seconds(30),
                initialRetryInterval: Duration = .seconds(2), maximumRetryInterval: Duration = .seconds(64),
                failedPairingBudget: Int = 16, failedPairingWindow: Duration = .seconds(60),
                securityRequestInterval: Duration = .seconds(1), keypressNotifications: Bool = false, maximumBonds: Int = 256) {
        self.ioCapability = ioCapability
        self.bondable = bondable
        self.requiresMITM = requiresMITM
        self.secureConnectionsOnly = secureConnectionsOnly
        self.minimumKeySize = min(max(minimumKeySize, 7), 16)
        self.maximumKeySize = min(max(maximumKeySize, self.minimumKeySize), 16)
        self.distributesIdentity = distributesIdentity
        self.distributesSigningKey = distributesSigningKey
        self.timeout = timeout
        self.initialRetryInterval = initialRetryInterval
        self.maximumRetryInterval = maximumRetryInterval
        self.failedPairingBudget = max(failedPairingBudget, 0)
        self.failedPairingWindow = failedPairingWindow
        self.securityRequestInterval = securityRequestInterval
        self.keypressNotifications = keypressNotifications
        self.maximumBonds = max(maximumBonds, 1)
    }

    /// The AuthReq this device sends: bonding, MITM, Secure Connections, Keypress and CT2 (Vol 3,
    /// Part H, 3.5.1).
    var authenticationRequirements: SMPAuthenticationRequirements {
        var authReq: SMPAuthenticationRequirements = offersSecureConnections ? [.secureConnections, .ct2] : []
        if bondable { authReq.insert(.bonding) }
        if requiresAuthentication { authReq.insert(.mitm) }
        if keypressNotifications { authReq.insert(.keypress) }
        return authReq
    }

    /// A pairing must be authenticated: MITM protection was asked for, or Secure Connections
    /// Only mode, which is security level 4 (Vol 3, Part C, 10.2.4).
    var requiresAuthentication: Bool { requiresMITM || secureConnectionsOnly }

    /// The key sizes accepted: 128 bits only in Secure Connections Only mode (Part C, 10.2.4).
    var effectiveMinimumKeySize: Int { secureConnectionsOnly ? 16 : minimumKeySize }
    var effectiveMaximumKeySize: Int { secureConnectionsOnly ? 16 : maximumKeySize }

    /// Whether a link may be encrypted with this bond's key: with MITM protection required
    /// only an authenticated bond, and in Secure Connections Only mode only one of level 4
    /// (never a legacy, unauthenticated or short key).
    func accepts(_ bond: Bond) -> Bool {
        (!requiresAuthentication || bond.isAuthenticated) && (!secureConnectionsOnly || bond.strength.isLevel4)
    }

    /// These settings asking for MITM protection as well (``LEHost/secure(_:authenticated:allowPairing:)``
    /// and ``LEHost/pair(_:authenticated:)`` with `authenticated`).
    func requiringAuthentication(_ authenticated: Bool) -> SecurityManagerSettings {
        var settings = self
        if authenticated { settings.requiresMITM = true }
        return settings
    }

    /// The keys this device distributes when bonding. The LTK of legacy pairing (EncKey) is
    /// ignored with LE Secure Connections; the BR/EDR link key is never derived (cross-transport
    /// key derivation is off).
    var keysToDistribute: SMPKeyDistribution {
        guard bondable else { return [] }
        var keys: SMPKeyDistribution = [.encryptionKey]
        if distributesIdentity { keys.insert(.identityKey) }
        if distributesSigningKey { keys.insert(.signingKey) }
        return keys
    }

    /// The keys this device accepts from a peer when bonding.
    var keysToAccept: SMPKeyDistribution {
        bondable ? [.encryptionKey, .identityKey, .signingKey] : []
    }
}
