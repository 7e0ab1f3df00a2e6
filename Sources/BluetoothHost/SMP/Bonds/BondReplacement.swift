import BluetoothCore

/// What a key from a pairing is worth (Core 6.0, Vol 3, Part C, 10.2.1): whether the pairing
/// protected against a man in the middle, whether it was LE Secure Connections, and the key's
/// size. A bond keeps it; a pairing that would replace a bond is compared with it.
public struct KeyStrength: Sendable, Hashable, CustomStringConvertible {
    /// MITM protection (Passkey Entry, Numeric Comparison or OOB), not Just Works.
    public var isAuthenticated: Bool
    /// LE Secure Connections (P-256), not legacy pairing.
    public var isSecureConnections: Bool
    /// The encryption key size in octets, 7…16.
    public var keySize: Int

    public init(isAuthenticated: Bool, isSecureConnections: Bool, keySize: Int) {
        self.isAuthenticated = isAuthenticated
        self.isSecureConnections = isSecureConnections
        self.keySize = keySize
    }

    /// Whether this key is weaker than `other` in any respect: unauthenticated where `other`
    /// is authenticated, legacy where `other` is LE Secure Connections, or shorter. Keys that
    /// are stronger in one respect and weaker in another are weaker: a bond is never traded
    /// for a key that loses any protection it had.
    public func isWeaker(than other: KeyStrength) -> Bool {
        (other.isAuthenticated && !isAuthenticated) || (other.isSecureConnections && !isSecureConnections) || keySize < other.keySize
    }

    /// LE security mode 1 level 4 (Vol 3, Part C, 10.2.1): authenticated LE Secure Connections
    /// with a 128-bit key, what Secure Connections Only mode demands (Part C, 10.2.4).
    public var isLevel4: Bool { isAuthenticated && isSecureConnections && keySize == 16 }

    public var description: String {
        "\(keySize * 8)-bit \(isAuthenticated ? "authenticated" : "unauthenticated") \(isSecureConnections ? "LE Secure Connections" : "legacy")"
    }
}

/// A pairing that would replace the bond with a peer: the identity it is stored under, what
/// the bond's key is worth and what the new one would be.
///
/// The host finds it at two points (see docs/ARCHITECTURE.md, "Security model"): before the
/// keys are exchanged, when the address the peer pairs from is a bonded identity or resolves
/// to one with a bond's IRK (``isClaimedIdentity`` false); and after key distribution, when
/// the identity address the peer distributed is bonded (``isClaimedIdentity`` true). A
/// replacement by a weaker key is refused unless the ``PairingAgent`` allows it; any
/// replacement that goes ahead is reported as ``HostEvent/bondReplaced(_:_:)``.
public struct BondReplacement: Sendable, Hashable, CustomStringConvertible {
    /// The identity the bond is stored under.
    public var identity: DeviceAddress
    /// What the stored bond's key is worth.
    public var bonded: KeyStrength
    /// What the new pairing's key is worth.
    public var proposed: KeyStrength
    /// The peer claimed the identity by distributing it (Identity Address Information), from
    /// an address that did not already name the bond: nothing proves it is the bonded device.
    public var isClaimedIdentity: Bool

    public init(identity: DeviceAddress, bonded: KeyStrength, proposed: KeyStrength, isClaimedIdentity: Bool) {
        self.identity = identity
        self.bonded = bonded
        self.proposed = proposed
        self.isClaimedIdentity = isClaimedIdentity
    }

    /// The new key is weaker than the bond's in some respect (``KeyStrength/isWeaker(than:)``).
    public var isWeaker: Bool { proposed.isWeaker(than: bonded) }

    /// After key distribution: what a bonding pairing whose keys are worth `proposed` would
    /// replace, `existing` being the bond stored under the identity the peer distributed (or
    /// its address), and `checkedBeforeKeys` what the procedure found before the keys.
    static func afterKeyDistribution(existing: Bond?, proposed: KeyStrength, checkedBeforeKeys: BondReplacement?) -> BondReplacement? {
        guard let existing else { return nil }
        return BondReplacement(identity: existing.peerIdentity, bonded: existing.strength, proposed: proposed,
                               isClaimedIdentity: checkedBeforeKeys?.identity != existing.peerIdentity)
    }

    /// The agent must allow this replacement before the keys are stored: weaker, and not
    /// already allowed before the keys (the same bond, found by the peer's address).
    var needsConsentAfterKeys: Bool { isWeaker && isClaimedIdentity }

    public var description: String {
        let how = isClaimedIdentity ? "a peer distributing the identity of" : "a pairing with"
        return "\(how) \(identity) would replace its \(bonded) bond with a \(proposed) key"
    }
}

extension Bond {
    /// What the bond's key is worth.
    public var strength: KeyStrength {
        KeyStrength(isAuthenticated: isAuthenticated, isSecureConnections: isSecureConnections, keySize: keySize)
    }
}

extension PairingOutcome {
    /// What the pairing's key is worth.
    public var strength: KeyStrength {
        KeyStrength(isAuthenticated: method.isAuthenticated, isSecureConnections: isSecureConnections, keySize: keySize)
    }
}
