
/// Who may read or write an attribute value on this device's server (Core 6.0, Vol 3,
/// Part F, 3.2.5). Properties in a characteristic declaration only tell the client what to
/// expect; these permissions are what the server enforces.
///
/// The server checks each request against the link's `LinkSecurity` (Core 6.0, Vol 3,
/// Part C, 10.3.1): access permission first, then encryption and authentication, then the
/// encryption key size (the definition's `minimumKeySize`), then authorization, which the
/// application's handler grants (`GATTServer/setAuthorizationHandler(_:)`). A requirement
/// of one direction lets a client use that direction once it is met, so
/// `[.readEncryptionRequired]` alone means "readable on an encrypted link".
public struct AttributePermissions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let readable = AttributePermissions(rawValue: 0x01)
    public static let writeable = AttributePermissions(rawValue: 0x02)
    /// Reads need an encrypted link.
    public static let readEncryptionRequired = AttributePermissions(rawValue: 0x04)
    /// Writes need an encrypted link.
    public static let writeEncryptionRequired = AttributePermissions(rawValue: 0x08)
    /// Reads need a link encrypted with a key from a pairing with MITM protection (implies
    /// encryption).
    public static let readAuthenticationRequired = AttributePermissions(rawValue: 0x10)
    /// Writes need a link encrypted with a key from a pairing with MITM protection (implies
    /// encryption).
    public static let writeAuthenticationRequired = AttributePermissions(rawValue: 0x20)
    /// Reads need the application's consent for this client.
    public static let readAuthorizationRequired = AttributePermissions(rawValue: 0x40)
    /// Writes need the application's consent for this client.
    public static let writeAuthorizationRequired = AttributePermissions(rawValue: 0x80)

    public static let readWrite: AttributePermissions = [.readable, .writeable]

    /// The permissions that match a characteristic's properties: readable with `read`,
    /// writeable with `write`, `writeWithoutResponse` or `authenticatedSignedWrites`.
    public init(properties: CharacteristicProperties) {
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.readable) }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites]) { permissions.insert(.writeable) }
        self = permissions
    }

    package static let readRequirements: AttributePermissions = [.readEncryptionRequired, .readAuthenticationRequired, .readAuthorizationRequired]
    package static let writeRequirements: AttributePermissions = [.writeEncryptionRequired, .writeAuthenticationRequired, .writeAuthorizationRequired]

    package var allowsReading: Bool { !isDisjoint(with: AttributePermissions.readable.union(Self.readRequirements)) }
    package var allowsWriting: Bool { !isDisjoint(with: AttributePermissions.writeable.union(Self.writeRequirements)) }

    public var description: String {
        let names: [(AttributePermissions, String)] = [
            (.readable, "readable"), (.writeable, "writeable"),
            (.readEncryptionRequired, "read-encrypted"), (.writeEncryptionRequired, "write-encrypted"),
            (.readAuthenticationRequired, "read-authenticated"), (.writeAuthenticationRequired, "write-authenticated"),
            (.readAuthorizationRequired, "read-authorized"), (.writeAuthorizationRequired, "write-authorized"),
        ]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: ",")
    }
}
