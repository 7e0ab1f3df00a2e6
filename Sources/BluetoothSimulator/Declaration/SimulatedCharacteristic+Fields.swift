import BluetoothCore
import BluetoothHost

/// The fields of ``SimulatedCharacteristic/definition``, read and written in place.
extension SimulatedCharacteristic {
    /// The characteristic UUID.
    public var uuid: BluetoothUUID {
        get { definition.uuid }
        set { definition.uuid = newValue }
    }

    /// What centrals may do: read, write, notify… Changing them re-derives the permissions
    /// when ``permissions`` is `nil`.
    public var properties: CharacteristicProperties {
        get { definition.properties }
        set {
            definition.properties = newValue
            resolvePermissions()
        }
    }

    /// The value until a central or the test changes it.
    public var value: [UInt8] {
        get { definition.value }
        set { definition.value = newValue }
    }

    /// The longest value a central may write (at most 512).
    public var maximumValueLength: Int {
        get { definition.maximumValueLength }
        set { definition.maximumValueLength = newValue }
    }

    /// Shown to centrals in a Characteristic User Description descriptor.
    public var userDescription: String? {
        get { definition.userDescription }
        set { definition.userDescription = newValue }
    }

    /// Published in a Characteristic Presentation Format descriptor.
    public var presentationFormat: GATTPresentationFormat? {
        get { definition.presentationFormat }
        set { definition.presentationFormat = newValue }
    }

    /// Further descriptors, after those the server adds itself.
    public var descriptors: [GATTDescriptorDefinition] {
        get { definition.descriptors }
        set { definition.descriptors = newValue }
    }
}
