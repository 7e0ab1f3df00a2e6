/// How well one LE link is protected: what encryption it has and what the key behind it is
/// worth (Core 6.0, Vol 3, Part C, 10.2.1, LE security mode 1).
///
/// The host updates it on Encryption Change and Encryption Key Refresh; the GATT server checks
/// attribute permissions against it, and `Connection/security` shows it to the app.
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

    public init(isEncrypted: Bool = false, isAuthenticated: Bool = false, isSecureConnections: Bool = false,
                keySize: Int = 0, isBonded: Bool = false) {
        self.isEncrypted = isEncrypted
        self.isAuthenticated = isAuthenticated && isEncrypted
        self.isSecureConnections = isSecureConnections && isEncrypted
        self.keySize = isEncrypted ? keySize : 0
        self.isBonded = isBonded
    }

    /// A link with no encryption (every link starts this way).
    public static let unencrypted = LinkSecurity()

    /// LE security mode 1 level (Core 6.0, Vol 3, Part C, 10.2.1): 1 no security, 2
    /// unauthenticated encryption, 3 authenticated encryption, 4 authenticated LE Secure
    /// Connections encryption with a 128-bit key.
    public var level: Int {
        guard isEncrypted else { return 1 }
        guard isAuthenticated else { return 2 }
        return isSecureConnections && keySize == 16 ? 4 : 3
    }

    public var description: String {
        guard isEncrypted else { return "unencrypted" }
        var parts = ["encrypted", "\(keySize * 8)-bit key"]
        parts.append(isAuthenticated ? "authenticated" : "unauthenticated")
        if isSecureConnections { parts.append("LE Secure Connections") }
        if isBonded { parts.append("bonded") }
        return parts.joined(separator: ", ")
    }
}
