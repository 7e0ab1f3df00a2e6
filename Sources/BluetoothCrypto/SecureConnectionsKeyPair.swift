import Crypto

/// An ephemeral P-256 key pair for LE Secure Connections (Core 6.0, Vol 3, Part H, 2.3.5.6.1).
///
/// Coordinates and the DHKey are 32 octets, most significant first (the spec's order; the
/// Pairing Public Key PDU carries each coordinate reversed).
public struct SecureConnectionsKeyPair: Sendable {
    private let privateKey: P256.KeyAgreement.PrivateKey

    /// The public key's x coordinate, 32 octets most significant first.
    public let publicKeyX: [UInt8]
    /// The public key's y coordinate, 32 octets most significant first.
    public let publicKeyY: [UInt8]

    /// A fresh random key pair.
    public init() {
        // Not "compact representable": that would draw from only half of the keys.
        self.init(key: P256.KeyAgreement.PrivateKey(compactRepresentable: false))
    }

    /// The key pair of a given private key, 32 octets most significant first: for the spec's
    /// debug key (``debugPrivateKey``) and sample data.
    public init(privateKey: [UInt8]) throws(SecurityCryptoError) {
        guard privateKey.count == 32 else {
            throw .invalidLength("private key: \(privateKey.count) octets, expected 32")
        }
        do {
            self.init(key: try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey))
        } catch {
            throw .invalidPrivateKey
        }
    }

    private init(key: P256.KeyAgreement.PrivateKey) {
        privateKey = key
        // x || y, 32 octets each, most significant first.
        let raw = Array(key.publicKey.rawRepresentation)
        publicKeyX = Array(raw.prefix(32))
        publicKeyY = Array(raw.dropFirst(32))
    }

    /// The DHKey: the x coordinate of the shared point, 32 octets most significant first
    /// (Core 6.0, Vol 3, Part H, 2.3.5.6.1).
    ///
    /// Throws ``SecurityCryptoError/invalidPublicKey`` for a point not on the curve (the
    /// invalid-curve attack), ``SecurityCryptoError/publicKeyEqualsOwn`` when the peer sent back
    /// our own key (its x coordinate equals ours, which also catches our key negated), and
    /// ``SecurityCryptoError/invalidLength(_:)`` for a coordinate that is not 32 octets.
    public func dhKey(peerX: [UInt8], peerY: [UInt8]) throws(SecurityCryptoError) -> [UInt8] {
        guard peerX.count == 32 else { throw .invalidLength("peer public key x: \(peerX.count) octets, expected 32") }
        guard peerY.count == 32 else { throw .invalidLength("peer public key y: \(peerY.count) octets, expected 32") }
        guard peerX != publicKeyX else { throw .publicKeyEqualsOwn }
        let peer: P256.KeyAgreement.PublicKey
        do {
            // swift-crypto (BoringSSL) refuses coordinates that are not below the prime or do not
            // satisfy the curve equation.
            peer = try P256.KeyAgreement.PublicKey(rawRepresentation: peerX + peerY)
        } catch {
            throw .invalidPublicKey
        }
        do {
            return try privateKey.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Array($0) }
        } catch {
            throw .invalidPublicKey
        }
    }

    /// The Secure Connections debug private key (Core 6.0, Vol 3, Part H, 2.3.5.6.1), whose
    /// use a sniffer can recognise and decrypt; for tests and debug mode only.
    public static let debugPrivateKey: [UInt8] = [
        0x3F, 0x49, 0xF6, 0xD4, 0xA3, 0xC5, 0x5F, 0x38, 0x74, 0xC9, 0xB3, 0xE3, 0xD2, 0x10, 0x3F, 0x50,
        0x4A, 0xFF, 0x60, 0x7B, 0xEB, 0x40, 0xB7, 0x99, 0x58, 0x99, 0xB8, 0xA6, 0xCD, 0x3C, 0x1A, 0xBD,
    ]
}
