import BluetoothHost

/// What a central's link must have before it may read, or write, a
/// ``PeripheralCharacteristic`` (Core 6.0, Vol 3, Part C, 10.3.1): the GATT server refuses
/// it otherwise, with the error that tells the central what to do (pair, encrypt, pair
/// again with MITM protection, ask the user).
///
/// ```swift
/// var secret = PeripheralCharacteristic(uuid: "FF01", properties: [.read, .write], writeSecurity: [.authentication, .key128])
/// secret.readSecurity = .encryption
/// ```
public struct PeripheralSecurity: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An encrypted link.
    public static let encryption = PeripheralSecurity(rawValue: 0x01)
    /// An encrypted link whose key came from a pairing with MITM protection (Passkey Entry,
    /// Numeric Comparison or OOB); implies encryption.
    public static let authentication = PeripheralSecurity(rawValue: 0x02)
    /// The application's consent, asked with `GATTServer/setAuthorizationHandler(_:)`.
    public static let authorization = PeripheralSecurity(rawValue: 0x04)
    /// A 128-bit (16-octet) encryption key; implies encryption. The key size is one per
    /// characteristic: it applies to its reads and its writes that need encryption.
    public static let key128 = PeripheralSecurity(rawValue: 0x08)
    /// Security level 4 (Core 6.0, Vol 3, Part C, 10.2.1): a link encrypted with a key from LE
    /// Secure Connections pairing with MITM protection, of 128 bits; implies encryption,
    /// authentication and ``key128``. A central short of it is refused with Insufficient
    /// Authentication (a key from legacy pairing or without MITM protection: pair again) or
    /// Encryption Key Size Too Short. Like the key size, one per characteristic: it applies to
    /// its reads and its writes that need encryption.
    public static let secureConnections = PeripheralSecurity(rawValue: 0x10)

    /// The permissions of this security for reads (`write == false`) or writes.
    public func permissions(write: Bool) -> AttributePermissions {
        var permissions: AttributePermissions = []
        if !isDisjoint(with: [.encryption, .key128, .secureConnections]) {
            permissions.insert(write ? .writeEncryptionRequired : .readEncryptionRequired)
        }
        if !isDisjoint(with: [.authentication, .secureConnections]) {
            permissions.insert(write ? .writeAuthenticationRequired : .readAuthenticationRequired)
        }
        if contains(.authorization) { permissions.insert(write ? .writeAuthorizationRequired : .readAuthorizationRequired) }
        return permissions
    }

    /// The security that `permissions` ask of reads (`write == false`) or writes, with a
    /// 128-bit key when `minimumKeySize` is 16 and the direction needs encryption, and level 4
    /// when `requiresSecureConnections` and it does.
    init(permissions: AttributePermissions, minimumKeySize: Int, requiresSecureConnections: Bool = false, write: Bool) {
        var security: PeripheralSecurity = []
        if permissions.contains(write ? .writeEncryptionRequired : .readEncryptionRequired) { security.insert(.encryption) }
        if permissions.contains(write ? .writeAuthenticationRequired : .readAuthenticationRequired) { security.insert(.authentication) }
        if permissions.contains(write ? .writeAuthorizationRequired : .readAuthorizationRequired) { security.insert(.authorization) }
        let needsEncryption = !security.isDisjoint(with: [.encryption, .authentication])
        if minimumKeySize >= 16, needsEncryption { security.insert(.key128) }
        if requiresSecureConnections, needsEncryption { security.insert(.secureConnections) }
        self = security
    }
}
