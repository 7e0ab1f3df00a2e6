import BluetoothCore

/// What a client's link lacks for a characteristic value whose reads need security (Core 6.0,
/// Vol 3, Part C, 10.3.1): why the server withholds a notification or indication of it from
/// that client (``GATTValueUpdate/withheld``, ``GATTServerError/insufficientSecurity(connectionHandle:_:)``).
///
/// A value's read requirements protect it however it leaves the server: read, notified or
/// indicated. Each push is checked against the link as it is when the push goes out, so a
/// link whose key became too short, or whose bond was removed, gets nothing more.
public enum GATTSecurityRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The link is not encrypted.
    case insufficientEncryption
    /// The link's key came from a pairing without MITM protection (Just Works).
    case insufficientAuthentication
    /// The value needs security level 4 (Core 6.0, Vol 3, Part C, 10.2.1) and the link's key,
    /// though authenticated, came from LE legacy pairing: the peer must pair again with LE
    /// Secure Connections. Answered Insufficient Authentication.
    case secureConnectionsRequired
    /// The link's key is shorter than the characteristic's minimum key size.
    case encryptionKeySizeTooShort(keySize: Int, minimum: Int)
    /// The link is encrypted with the key of a bond this device has removed since: the peer
    /// must pair again.
    case bondRemoved

    /// The error a request refused for this reason is answered with: an unencrypted link (or
    /// one whose bond is gone) is told to encrypt when the server has a key for the peer, else
    /// to pair (Core 6.0, Vol 3, Part C, 10.3.1).
    func errorCode(peerHasKey: () -> Bool) -> ATTErrorCode {
        switch self {
        case .insufficientEncryption, .bondRemoved: return peerHasKey() ? .insufficientEncryption : .insufficientAuthentication
        case .insufficientAuthentication, .secureConnectionsRequired: return .insufficientAuthentication
        case .encryptionKeySizeTooShort: return .encryptionKeySizeTooShort
        }
    }

    public var description: String {
        switch self {
        case .insufficientEncryption: return "the link is not encrypted"
        case .insufficientAuthentication: return "the link's key is not authenticated (pair with MITM protection)"
        case .secureConnectionsRequired: return "the link's key is not from LE Secure Connections (pair again with LE Secure Connections)"
        case let .encryptionKeySizeTooShort(size, minimum): return "the link's key has \(size) octets, fewer than the \(minimum) required"
        case .bondRemoved: return "the link is encrypted with the key of a removed bond (pair again)"
        }
    }
}
