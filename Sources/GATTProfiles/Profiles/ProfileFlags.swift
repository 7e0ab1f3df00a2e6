import BluetoothCore

/// The characteristic properties a profile declares: ``CharacteristicProperties`` itself
/// (the bits of the characteristic declaration, Core 6.0, Vol 3, Part G, 3.3.1.1), under the
/// name profiles used before there was one option set.
public typealias ProfileCharacteristicProperties = CharacteristicProperties

/// Who may read or write a characteristic a profile declares (Core 6.0, Vol 3, Part F,
/// 3.2.5). The bits match `AttributePermissions` of the host's GATT server.
public struct ProfileAttributePermissions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let readable = Self(rawValue: 0x01)
    public static let writeable = Self(rawValue: 0x02)
    public static let readEncryptionRequired = Self(rawValue: 0x04)
    public static let writeEncryptionRequired = Self(rawValue: 0x08)

    public static let readWrite: Self = [.readable, .writeable]
}
