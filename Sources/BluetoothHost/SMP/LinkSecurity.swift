import BluetoothCore

/// How well one LE link is protected: what encryption it has and what the key behind it is
/// worth (Core 6.0, Vol 3, Part C, 10.2.1, LE security mode 1).
///
/// The host updates it on Encryption Change and Encryption Key Refresh (on the transport's reader
/// thread, in the controller's order, so the ATT PDU after the event sees the new security),
/// and when a bond behind the link's key is removed; the GATT server checks attribute
/// permissions against it, and `Connection/security` shows it to the app.
public struct LinkSecurity: Sendable, Hashable, CustomStringConvertible {
    /// The link is encrypted.
    public var isEncrypted: Bool
    /// The key came from a pairing with MITM protection (Passkey Entry, Numeric Comparison or
    /// OOB), not Just Works.
    public var isAuthenticated: Bool
    /// The key came from LE Secure Connections pairing (P-256), not legacy pairing.
    public var isSecureConnections: Bool
    /// The encryption key size in octets, 7…16; 0 on a link that is not encrypted.
    public var keySize: Int
    /// The key is stored in a bond (both sides distributed and kept keys).
    public var isBonded: Bool
    /// The peer's identity in the bond whose key encrypts the link: set when the link was
    /// encrypted with a stored bond's key, or by the bonding pairing that made the bond on this
    /// link; `nil` otherwise. Only a peer that holds the bond's keys gets a link with it, so it
    /// tells who the peer is where its address cannot (anyone may use any address). The GATT
    /// server keeps a bonded client's state under it.
    public var bondIdentity: DeviceAddress?
    /// The bond whose key encrypts the link was removed on this device while the link stayed
    /// up: the link is still encrypted, but nothing that needs security is served or pushed on
    /// it until the peer pairs again (``level`` is 1).
    public var isBondRemoved: Bool

    public init(isEncrypted: Bool = false, isAuthenticated: Bool = false, isSecureConnections: Bool = false,
                keySize: Int = 0, isBonded: Bool = false, bondIdentity: DeviceAddress? = nil, isBondRemoved: Bool = false) {
        self.isEncrypted = isEncrypted
        self.isAuthenticated = isAuthenticated && isEncrypted
        self.isSecureConnections = isSecureConnections && isEncrypted
        self.keySize = isEncrypted ? keySize : 0
        self.isBondRemoved = isBondRemoved && isEncrypted
        self.bondIdentity = isEncrypted && !isBondRemoved ? bondIdentity.map { DeviceAddress($0.address, type: $0.type.base) } : nil
        self.isBonded = (isBonded || self.bondIdentity != nil) && !self.isBondRemoved
    }

    /// What a link encrypted with a bond's key is worth.
    init(bond: Bond) {
        self.init(isEncrypted: true, isAuthenticated: bond.isAuthenticated, isSecureConnections: bond.isSecureConnections,
                  keySize: bond.keySize, isBonded: true, bondIdentity: bond.peerIdentity)
    }

    /// The same link once the bond with `identity` is removed, if its key is that bond's.
    func removingBond(_ identity: DeviceAddress) -> LinkSecurity? {
        guard let bondIdentity, bondIdentity == DeviceAddress(identity.address, type: identity.type.base) else { return nil }
        return LinkSecurity(isEncrypted: isEncrypted, isAuthenticated: isAuthenticated, isSecureConnections: isSecureConnections,
                            keySize: keySize, isBondRemoved: true)
    }

    /// A link with no encryption (every link starts this way).
    public static let unencrypted = LinkSecurity()

    /// LE security mode 1 level (Core 6.0, Vol 3, Part C, 10.2.1): 1 no security, 2
    /// unauthenticated encryption, 3 authenticated encryption, 4 authenticated LE Secure
    /// Connections encryption with a 128-bit key. A link whose bond was removed is level 1.
    public var level: Int {
        guard isEncrypted, !isBondRemoved else { return 1 }
        guard isAuthenticated else { return 2 }
        return isSecureConnections && keySize == 16 ? 4 : 3
    }

    public var description: String {
        guard isEncrypted else { return "unencrypted" }
        var parts = ["encrypted", "\(keySize * 8)-bit key"]
        parts.append(isAuthenticated ? "authenticated" : "unauthenticated")
        if isSecureConnections { parts.append("LE Secure Connections") }
        if isBonded { parts.append("bonded") }
        if isBondRemoved { parts.append("bond removed") }
        return parts.joined(separator: ", ")
    }
}
