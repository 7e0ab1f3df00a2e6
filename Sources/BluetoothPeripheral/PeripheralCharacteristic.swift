import BluetoothCore
import BluetoothHost
import GATTProfiles

/// A characteristic of a ``PeripheralService``: BlueCap's mutable characteristic, a builder
/// over the `GATTCharacteristicDefinition` the GATT server takes.
public struct PeripheralCharacteristic: Sendable {
    /// What the GATT server publishes. Its `onRead` and `onWrite` are replaced when the
    /// service is added: answer requests with ``PeripheralManager/setReadHandler(for:_:)``
    /// and `PeripheralManager/writeRequests(for:)`.
    public var definition: GATTCharacteristicDefinition
    /// A name for logs; centrals never see it.
    public var name: String?
    /// Converts values to and from text, for ``PeripheralManager/updateValue(stringValue:for:)``.
    public var profile: CharacteristicProfile?

    /// - Parameters:
    ///   - properties: what centrals may do with it (read, write, notify, …).
    ///   - name: a name for logs; centrals never see it.
    ///   - value: the initial value.
    ///   - maximumValueLength: the longest value a write may set (at most 512).
    ///   - descriptors: further descriptors, in order.
    ///   - uuid: the characteristic's type.
    ///   - presentationFormat: a Presentation Format descriptor, if any.
    ///   - userDescription: text for a User Description descriptor, if any.
    ///   - permissions: `nil` derives them from the properties.
    ///   - readSecurity: what a central's link needs to read (added to `permissions`).
    ///   - writeSecurity: what a central's link needs to write (added to `permissions`).
    public init(uuid: BluetoothUUID, name: String? = nil, properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
                readSecurity: PeripheralSecurity = [], writeSecurity: PeripheralSecurity = [],
                value: [UInt8] = [], maximumValueLength: Int = GATTCharacteristicDefinition.maximumAttributeValueLength,
                userDescription: String? = nil, presentationFormat: GATTPresentationFormat? = nil,
                descriptors: [GATTDescriptorDefinition] = []) {
        let definition = GATTCharacteristicDefinition(
            uuid: uuid, properties: properties, permissions: permissions, value: value, maximumValueLength: maximumValueLength,
            userDescription: userDescription, presentationFormat: presentationFormat, descriptors: descriptors)
        self.init(definition: definition, name: name)
        if !readSecurity.isEmpty { self.readSecurity = readSecurity }
        if !writeSecurity.isEmpty { self.writeSecurity = writeSecurity }
    }

    /// A characteristic as the GATT server takes it.
    public init(definition: GATTCharacteristicDefinition, name: String? = nil, profile: CharacteristicProfile? = nil) {
        self.definition = definition
        self.name = name
        self.profile = profile
    }

    /// A characteristic as its profile configures it: UUID, name, properties, permissions,
    /// initial value.
    public init(profile: CharacteristicProfile) {
        self.init(uuid: profile.uuid, name: profile.name, properties: profile.properties,
                  permissions: profile.permissions, value: profile.initialValue ?? [])
        self.profile = profile
    }

    /// `definition` with handlers that route the requests its permissions allow to `router`.
    static func route(_ definition: GATTCharacteristicDefinition, to router: RequestRouter) -> GATTCharacteristicDefinition {
        let onRead: GATTReadHandler = { request in await router.read(request) }
        let onWrite: GATTWriteHandler = { request in await router.write(request) }
        var routed = definition
        routed.onRead = definition.isReadable ? onRead : nil
        routed.onWrite = definition.isWritable ? onWrite : nil
        return routed
    }
}
