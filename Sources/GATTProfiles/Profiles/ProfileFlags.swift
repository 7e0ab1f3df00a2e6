import BluetoothCore

/// The characteristic properties a profile declares: `CharacteristicProperties` itself
/// (the bits of the characteristic declaration, Core 6.0, Vol 3, Part G, 3.3.1.1), under the
/// name profiles used before there was one option set.
public typealias ProfileCharacteristicProperties = CharacteristicProperties

/// Who may read or write a characteristic a profile declares (Core 6.0, Vol 3, Part F,
/// 3.2.5): `AttributePermissions` itself, the one the GATT server takes, under the name
/// profiles used before there was one option set.
public typealias ProfileAttributePermissions = AttributePermissions
