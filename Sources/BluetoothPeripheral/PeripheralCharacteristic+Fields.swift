import BluetoothCore
import BluetoothHost

/// The fields of ``PeripheralCharacteristic/definition``, read and written in place.
extension PeripheralCharacteristic {
    /// The characteristic UUID.
    public var uuid: BluetoothUUID {
        get { definition.uuid }
        set { definition.uuid = newValue }
    }

    /// What centrals may do: read, write, notify…
    public var properties: CharacteristicProperties {
        get { definition.properties }
        set { definition.properties = newValue }
    }

    /// Who may read and write, as the server enforces it.
    public var permissions: AttributePermissions {
        get { definition.permissions }
        set { definition.permissions = newValue }
    }

    /// What a central's link needs to read the value; setting it replaces the read
    /// requirements of ``permissions`` (and sets ``minimumKeySize`` to 16 with
    /// ``PeripheralSecurity/key128``, and ``requiresSecureConnections`` with
    /// ``PeripheralSecurity/secureConnections``). It protects the value however it leaves: a central
    /// needs it to subscribe, and each notification or indication goes only to centrals whose
    /// link has it when it is sent.
    public var readSecurity: PeripheralSecurity {
        get {
            PeripheralSecurity(permissions: definition.permissions, minimumKeySize: definition.minimumKeySize,
                               requiresSecureConnections: definition.requiresSecureConnections, write: false)
        }
        set { setSecurity(newValue, write: false) }
    }

    /// What a central's link needs to write the value; setting it replaces the write
    /// requirements of ``permissions`` (and sets ``minimumKeySize`` to 16 with
    /// ``PeripheralSecurity/key128``, and ``requiresSecureConnections`` with
    /// ``PeripheralSecurity/secureConnections``).
    public var writeSecurity: PeripheralSecurity {
        get {
            PeripheralSecurity(permissions: definition.permissions, minimumKeySize: definition.minimumKeySize,
                               requiresSecureConnections: definition.requiresSecureConnections, write: true)
        }
        set { setSecurity(newValue, write: true) }
    }

    /// The shortest encryption key, in octets (7…16), that the reads and writes needing
    /// encryption accept.
    public var minimumKeySize: Int {
        get { definition.minimumKeySize }
        set { definition.minimumKeySize = newValue }
    }

    /// Security level 4 for the reads and writes that need encryption (LE Secure Connections,
    /// authenticated, 128-bit key): ``PeripheralSecurity/secureConnections``.
    public var requiresSecureConnections: Bool {
        get { definition.requiresSecureConnections }
        set { definition.requiresSecureConnections = newValue }
    }

    /// A bonded central subscribed to notifications that was away when the value changed is
    /// notified of the latest value once its link is encrypted again (Core 6.0, Vol 3, Part G,
    /// 3.3.3.3 keeps its subscription; whether it hears of what it missed is the profile's
    /// choice). Off by default. Indications are kept for away bonded centrals either way, within
    /// `GATTServerSettings/maximumDeferredIndications`.
    public var notifiesLatestValueOnReconnection: Bool {
        get { definition.notifiesLatestValueOnReconnection }
        set { definition.notifiesLatestValueOnReconnection = newValue }
    }

    /// Who may write the Client Characteristic Configuration (subscribe): its write
    /// requirements apply; it is always readable.
    public var clientConfigurationPermissions: AttributePermissions {
        get { definition.clientConfigurationPermissions }
        set { definition.clientConfigurationPermissions = newValue }
    }

    private mutating func setSecurity(_ security: PeripheralSecurity, write: Bool) {
        let requirements: AttributePermissions = write
            ? [.writeEncryptionRequired, .writeAuthenticationRequired, .writeAuthorizationRequired]
            : [.readEncryptionRequired, .readAuthenticationRequired, .readAuthorizationRequired]
        var permissions = definition.permissions.subtracting(requirements).union(security.permissions(write: write))
        // A direction with requirements is open to the central once they are met.
        if !security.isEmpty { permissions.insert(write ? .writeable : .readable) }
        definition.permissions = permissions
        let other = write ? readSecurity : writeSecurity
        if !security.isDisjoint(with: [.key128, .secureConnections]) {
            definition.minimumKeySize = 16
        } else if definition.minimumKeySize == 16, !other.contains(.key128) {
            definition.minimumKeySize = GATTCharacteristicDefinition.encryptionKeySizes.lowerBound
        }
        if security.contains(.secureConnections) {
            definition.requiresSecureConnections = true
        } else if !other.contains(.secureConnections) {
            definition.requiresSecureConnections = false
        }
    }

    /// The value until a central or the application changes it.
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
