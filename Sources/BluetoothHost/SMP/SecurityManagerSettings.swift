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
    /// Refuse legacy pairing: only LE Secure Connections (Secure Connections Only mode, Vol 3,
    /// Part C, 10.2.4).
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
    /// The Security Manager Timer (Vol 3, Part H, 3.4): a pairing with no SMP progress for
    /// this long fails.
    public var timeout: Duration
    /// The first wait after a failed pairing before the same peer may try again (Vol 3, Part H,
    /// 2.3.6); each further failure doubles it, up to ``maximumRetryInterval``.
    public var initialRetryInterval: Duration
    public var maximumRetryInterval: Duration
    /// Offer LE Secure Connections (the SC flag). Off only to test legacy pairing.
    var offersSecureConnections = true

    public init(ioCapability: SMPIOCapability = .noInputNoOutput, bondable: Bool = true, requiresMITM: Bool = false,
                secureConnectionsOnly: Bool = false, minimumKeySize: Int = 7, maximumKeySize: Int = 16,
                distributesIdentity: Bool = true, distributesSigningKey: Bool = true, timeout: Duration = .seconds(30),
                initialRetryInterval: Duration = .seconds(2), maximumRetryInterval: Duration = .seconds(64)) {
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
    }

    /// The AuthReq this device sends: bonding, MITM, Secure Connections and CT2 (Vol 3,
    /// Part H, 3.5.1). Keypress notifications are not offered.
    var authenticationRequirements: SMPAuthenticationRequirements {
        var authReq: SMPAuthenticationRequirements = offersSecureConnections ? [.secureConnections, .ct2] : []
        if bondable { authReq.insert(.bonding) }
        if requiresMITM { authReq.insert(.mitm) }
        return authReq
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
