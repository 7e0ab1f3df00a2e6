/// Why a Secure Connections key operation was refused.
public enum SecurityCryptoError: Error, Sendable, Hashable {
    /// The peer's public key is not a point on P-256 (Core 6.0, Vol 3, Part H, 2.3.5.6.1: the
    /// invalid-curve attack), or a coordinate is not below the field prime.
    case invalidPublicKey
    /// The peer sent back our own public key (its x coordinate equals ours).
    case publicKeyEqualsOwn
    /// An argument had the wrong number of octets; the text names it and both lengths.
    case invalidLength(String)
    /// A private key of 32 octets that is not a valid P-256 scalar (zero, or not below the
    /// group order).
    case invalidPrivateKey
}
