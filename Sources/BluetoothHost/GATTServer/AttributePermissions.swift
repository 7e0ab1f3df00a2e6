/// Who may read or write an attribute value on this device's server (Core 6.0, Vol 3,
/// Part F, 3.2.5). Properties in a characteristic declaration only tell the client what to
/// expect; these permissions are what the server enforces.
///
/// This host refuses pairing, so no link is ever encrypted: an attribute that requires
/// encryption is answered with Insufficient Authentication (Core 6.0, Vol 3, Part C, 10.3.1).
public struct AttributePermissions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let readable = AttributePermissions(rawValue: 0x01)
    public static let writeable = AttributePermissions(rawValue: 0x02)
    /// Reads need an encrypted link.
    public static let readEncryptionRequired = AttributePermissions(rawValue: 0x04)
    /// Writes need an encrypted link.
    public static let writeEncryptionRequired = AttributePermissions(rawValue: 0x08)

    public static let readWrite: AttributePermissions = [.readable, .writeable]

    /// The permissions that match a characteristic's properties: readable with `read`,
    /// writeable with `write` or `writeWithoutResponse`.
    public init(properties: CharacteristicProperties) {
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.readable) }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse]) { permissions.insert(.writeable) }
        self = permissions
    }

    var allowsReading: Bool { !isDisjoint(with: [.readable, .readEncryptionRequired]) }
    var allowsWriting: Bool { !isDisjoint(with: [.writeable, .writeEncryptionRequired]) }

    public var description: String {
        let names: [(AttributePermissions, String)] = [
            (.readable, "readable"), (.writeable, "writeable"),
            (.readEncryptionRequired, "read-encrypted"), (.writeEncryptionRequired, "write-encrypted"),
        ]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: ",")
    }
}
