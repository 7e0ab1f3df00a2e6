import BluetoothCore
import BluetoothHost
import GATTProfiles

/// A service to publish with ``PeripheralManager/add(_:)``: BlueCap's mutable service.
///
/// ```swift
/// let service = PeripheralService(profile: TISensorTag.AccelerometerService.profile)
/// let battery = PeripheralService(uuid: "180F", characteristics: [
///     PeripheralCharacteristic(uuid: "2A19", properties: [.read, .notify], value: [100]),
/// ])
/// ```
public struct PeripheralService: Sendable {
    public var uuid: BluetoothUUID
    public var name: String?
    public var isPrimary: Bool
    /// Services already published that this one includes, by UUID.
    public var includedServices: [BluetoothUUID]
    public var characteristics: [PeripheralCharacteristic]

    public init(uuid: BluetoothUUID, name: String? = nil, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [PeripheralCharacteristic] = []) {
        self.uuid = uuid
        self.name = name
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }

    /// The service of a profile with every characteristic the profile defines.
    public init(profile: ServiceProfile) {
        self.init(uuid: profile.uuid, name: profile.name, characteristics: profile.characteristics.map(PeripheralCharacteristic.init(profile:)))
    }

    /// The definition the GATT server takes; the handlers route requests to `router`.
    func definition(router: RequestRouter) -> GATTServiceDefinition {
        GATTServiceDefinition(uuid: uuid, isPrimary: isPrimary, includedServices: includedServices,
                              characteristics: characteristics.map { $0.definition(router: router) })
    }
}

/// A characteristic of a ``PeripheralService``: BlueCap's mutable characteristic.
public struct PeripheralCharacteristic: Sendable {
    public var uuid: BluetoothUUID
    public var name: String?
    public var properties: CharacteristicProperties
    public var permissions: AttributePermissions
    /// The value until a central or the application changes it.
    public var value: [UInt8]
    /// The longest value a central may write (at most 512).
    public var maximumValueLength: Int
    /// Shown to centrals in a Characteristic User Description descriptor.
    public var userDescription: String?
    public var presentationFormat: GATTPresentationFormat?
    public var descriptors: [GATTDescriptorDefinition]
    /// Converts values to and from text, for ``PeripheralManager/updateValue(stringValue:for:)``.
    public var profile: CharacteristicProfile?

    /// - Parameter permissions: `nil` derives them from the properties.
    public init(uuid: BluetoothUUID, name: String? = nil, properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
                value: [UInt8] = [], maximumValueLength: Int = GATTCharacteristicDefinition.maximumAttributeValueLength,
                userDescription: String? = nil, presentationFormat: GATTPresentationFormat? = nil,
                descriptors: [GATTDescriptorDefinition] = []) {
        self.uuid = uuid
        self.name = name
        self.properties = properties
        self.permissions = permissions ?? AttributePermissions(properties: properties)
        self.value = value
        self.maximumValueLength = maximumValueLength
        self.userDescription = userDescription
        self.presentationFormat = presentationFormat
        self.descriptors = descriptors
    }

    /// A characteristic as its profile configures it: UUID, name, properties, permissions,
    /// initial value.
    public init(profile: CharacteristicProfile) {
        self.init(uuid: profile.uuid, name: profile.name, properties: CharacteristicProperties(rawValue: profile.properties.rawValue),
                  permissions: AttributePermissions(rawValue: profile.permissions.rawValue), value: profile.initialValue ?? [])
        self.profile = profile
    }

    func definition(router: RequestRouter) -> GATTCharacteristicDefinition {
        let readable = permissions.contains(.readable) || permissions.contains(.readEncryptionRequired)
        let writeable = permissions.contains(.writeable) || permissions.contains(.writeEncryptionRequired)
        let onRead: GATTReadHandler = { request in await router.read(request) }
        let onWrite: GATTWriteHandler = { request in await router.write(request) }
        return GATTCharacteristicDefinition(
            uuid: uuid, properties: properties, permissions: permissions, value: value, maximumValueLength: maximumValueLength,
            userDescription: userDescription, presentationFormat: presentationFormat, descriptors: descriptors,
            onRead: readable ? onRead : nil, onWrite: writeable ? onWrite : nil)
    }
}
