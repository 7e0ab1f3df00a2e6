import BluetoothCore

/// What one direction (read or write) of an attribute asks of the link, and the check of a
/// link against it (Core 6.0, Vol 3, Part C, 10.3.1 and Part F, 4). A plain value: the
/// server supplies the link's ``LinkSecurity`` and whether it has a key for the peer.
struct AttributeSecurityRequirement: Sendable, Hashable {
    /// The link must be encrypted.
    var encryption: Bool
    /// The link's key must come from a pairing with MITM protection.
    var authentication: Bool
    /// The application must consent.
    var authorization: Bool
    /// The shortest encryption key accepted, in octets, when the link must be encrypted.
    var minimumKeySize: Int
    /// Security level 4 when the link must be encrypted (Core 6.0, Vol 3, Part C, 10.2.1): a key
    /// from LE Secure Connections pairing with MITM protection, of 16 octets.
    var secureConnections: Bool

    /// The requirements of reads (`write == false`) or writes of an attribute.
    init(permissions: AttributePermissions, minimumKeySize: Int, secureConnections: Bool = false, write: Bool) {
        encryption = permissions.contains(write ? .writeEncryptionRequired : .readEncryptionRequired)
        authentication = permissions.contains(write ? .writeAuthenticationRequired : .readAuthenticationRequired)
        authorization = permissions.contains(write ? .writeAuthorizationRequired : .readAuthorizationRequired)
        self.minimumKeySize = minimumKeySize
        self.secureConnections = secureConnections
    }

    /// The link must be encrypted: authentication and level 4 are about the encryption key, so
    /// they need encryption too.
    var needsEncryption: Bool { encryption || authentication || secureConnections }

    /// What the link lacks, if it does not meet the requirements; authorization is not part of
    /// it (the application decides it). In the order of Core 6.0, Vol 3, Part C, 10.3.1: a link
    /// not encrypted (or encrypted with the key of a removed bond), then a key without MITM
    /// protection when authentication (or level 4) is required, then a key not from LE Secure
    /// Connections where level 4 is, then a key shorter than ``minimumKeySize`` (16 octets at
    /// level 4).
    func shortfall(on security: LinkSecurity) -> GATTSecurityRefusal? {
        guard needsEncryption else { return nil }
        if security.isBondRemoved { return .bondRemoved }
        guard security.isEncrypted else { return .insufficientEncryption }
        if authentication || secureConnections, !security.isAuthenticated { return .insufficientAuthentication }
        if secureConnections, !security.isSecureConnections { return .secureConnectionsRequired }
        let minimum = secureConnections ? 16 : minimumKeySize
        if security.keySize < minimum { return .encryptionKeySizeTooShort(keySize: security.keySize, minimum: minimum) }
        return nil
    }

    /// The error to answer on a link with `security`, if the link does not meet the
    /// requirements (``shortfall(on:)``); authorization is not part of it (the application
    /// decides it later). `peerHasKey` is asked only for a refusal of an unencrypted link.
    ///
    /// - An unencrypted link, or one encrypted with a removed bond's key: Insufficient
    ///   Encryption when the server has a key for the peer (the client may start encryption
    ///   with it), else Insufficient Authentication (it must pair first) (Core 6.0, Vol 3,
    ///   Part C, 10.3.1).
    /// - An encrypted link whose key is not authenticated, or, where level 4 is required, not
    ///   from LE Secure Connections: Insufficient Authentication (a new pairing gives it).
    /// - A key shorter than ``minimumKeySize`` (16 at level 4): Encryption Key Size Too Short.
    func refusal(on security: LinkSecurity, peerHasKey: @autoclosure () -> Bool) -> ATTErrorCode? {
        shortfall(on: security)?.errorCode(peerHasKey: peerHasKey)
    }
}
