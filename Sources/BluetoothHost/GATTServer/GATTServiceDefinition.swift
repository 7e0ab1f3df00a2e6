import BluetoothCore

/// A service to publish on this device's GATT server (Core 6.0, Vol 3, Part G, 3.1): its
/// characteristics in order, and the services it includes.
public struct GATTServiceDefinition: Sendable {
    public var uuid: BluetoothUUID
    /// Primary services are found by discovery; secondary ones only through an include.
    public var isPrimary: Bool
    /// Services already published that this one includes (Core 6.0, Vol 3, Part G, 3.2),
    /// found by UUID when the service is added.
    public var includedServices: [BluetoothUUID]
    public var characteristics: [GATTCharacteristicDefinition]

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [GATTCharacteristicDefinition] = []) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }
}

/// A characteristic of a ``GATTServiceDefinition`` (Core 6.0, Vol 3, Part G, 3.3).
///
/// The server adds a Client Characteristic Configuration descriptor when the properties
/// include `notify` or `indicate`, a User Description descriptor when ``userDescription``
/// is set and a Presentation Format descriptor when ``presentationFormat`` is, then the
/// other ``descriptors`` in order.
public struct GATTCharacteristicDefinition: Sendable {
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public var permissions: AttributePermissions
    /// The shortest encryption key, in octets (7…16), that reads or writes needing
    /// encryption or authentication accept; a shorter one is refused with Encryption Key
    /// Size Too Short. 16 asks for a 128-bit key. Accesses that need no encryption ignore it.
    public var minimumKeySize: Int
    /// The reads and writes that need encryption or authentication need security level 4
    /// (Core 6.0, Vol 3, Part C, 10.2.1): a link encrypted with a key from LE Secure Connections
    /// pairing with MITM protection, of 16 octets. A link short of it is refused with Insufficient
    /// Encryption or Insufficient Authentication (not encrypted; a key without MITM protection, or
    /// from legacy pairing) or Encryption Key Size Too Short, and gets no notification or
    /// indication of the value. Like ``minimumKeySize``, one per characteristic.
    public var requiresSecureConnections: Bool
    /// A bonded client subscribed to notifications of this value that was away when it was
    /// updated (no link encrypted with its bond's key) is notified of the latest value once it is
    /// back. Off by default: notifications are not kept for away clients (Core 6.0, Vol 3, Part G,
    /// 3.3.3.3 keeps only the configuration); indications are, within
    /// ``GATTServerSettings/maximumDeferredIndications``.
    public var notifiesLatestValueOnReconnection: Bool
    /// Who may write the Client Characteristic Configuration descriptor the server adds
    /// with `notify` or `indicate`: its write requirements (encryption, authentication,
    /// authorization) apply, with ``minimumKeySize``; it is always readable, with no
    /// security (Core 6.0, Vol 3, Part G, 3.3.3.3). Subscribing also needs what a read of the
    /// value needs (the read requirements of ``permissions``, and the application's
    /// authorization as for a read), and each notification or indication goes only to a
    /// client whose link has that security when it is sent.
    public var clientConfigurationPermissions: AttributePermissions
    /// The value until a client or the application changes it.
    public var value: [UInt8]
    /// The longest value a write may set; at most 512 (Core 6.0, Vol 3, Part F, 3.2.9).
    public var maximumValueLength: Int
    /// Text for the Characteristic User Description descriptor (0x2901).
    public var userDescription: String?
    /// The Characteristic Presentation Format descriptor (0x2904).
    public var presentationFormat: GATTPresentationFormat?
    public var descriptors: [GATTDescriptorDefinition]
    /// Answers reads instead of the stored value.
    public var onRead: GATTReadHandler?
    /// Accepts or refuses writes; without one every permitted write is stored.
    public var onWrite: GATTWriteHandler?

    /// - Parameters:
    ///   - value: the value until a client or the application changes it.
    ///   - properties: what clients may do with it (read, write, notify, …).
    ///   - maximumValueLength: the longest value a write may set (at most 512).
    ///   - userDescription: text for a User Description descriptor, if any.
    ///   - descriptors: further descriptors, in order.
    ///   - presentationFormat: a Presentation Format descriptor, if any.
    ///   - uuid: the characteristic's type.
    ///   - onWrite: accepts or refuses writes.
    ///   - onRead: answers reads instead of the stored value.
    ///   - permissions: `nil` derives them from `properties` (see
    ///     `AttributePermissions/init(properties:)`).
    ///   - minimumKeySize: the shortest encryption key (7–16 octets) that reads and writes
    ///     needing encryption accept.
    ///   - requiresSecureConnections: reads and writes needing encryption need security level 4.
    ///   - notifiesLatestValueOnReconnection: a bonded subscriber that was away when the value
    ///     changed is notified of the latest value on its return.
    ///   - clientConfigurationPermissions: the permissions of the Client Characteristic
    ///     Configuration descriptor, when the characteristic notifies or indicates.
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions? = nil,
                minimumKeySize: Int = GATTCharacteristicDefinition.encryptionKeySizes.lowerBound,
                requiresSecureConnections: Bool = false, notifiesLatestValueOnReconnection: Bool = false,
                clientConfigurationPermissions: AttributePermissions = .readWrite,
                value: [UInt8] = [], maximumValueLength: Int = GATTCharacteristicDefinition.maximumAttributeValueLength,
                userDescription: String? = nil, presentationFormat: GATTPresentationFormat? = nil,
                descriptors: [GATTDescriptorDefinition] = [],
                onRead: GATTReadHandler? = nil, onWrite: GATTWriteHandler? = nil) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions ?? AttributePermissions(properties: properties)
        self.minimumKeySize = minimumKeySize
        self.requiresSecureConnections = requiresSecureConnections
        self.notifiesLatestValueOnReconnection = notifiesLatestValueOnReconnection
        self.clientConfigurationPermissions = clientConfigurationPermissions
        self.value = value
        self.maximumValueLength = maximumValueLength
        self.userDescription = userDescription
        self.presentationFormat = presentationFormat
        self.descriptors = descriptors
        self.onRead = onRead
        self.onWrite = onWrite
    }

    /// Whether ``permissions`` let a client read the value (perhaps only on a secure enough
    /// link, or with the application's authorization), as the server decides it.
    public var isReadable: Bool { permissions.allowsReading }

    /// Whether ``permissions`` let a client write the value (perhaps only on a secure enough
    /// link, or with the application's authorization), as the server decides it.
    public var isWritable: Bool { permissions.allowsWriting }

    /// The longest attribute value ATT allows (Core 6.0, Vol 3, Part F, 3.2.9).
    public static let maximumAttributeValueLength = 512

    /// The encryption key sizes a link may have, in octets (Core 6.0, Vol 3, Part H, 2.3.4):
    /// the values ``minimumKeySize`` may take.
    public static let encryptionKeySizes = 7...16
}

/// A descriptor of a ``GATTCharacteristicDefinition`` other than those the server adds
/// itself (Core 6.0, Vol 3, Part G, 3.3.3).
public struct GATTDescriptorDefinition: Sendable {
    public var uuid: BluetoothUUID
    public var permissions: AttributePermissions
    /// As ``GATTCharacteristicDefinition/minimumKeySize``: the shortest encryption key, in
    /// octets (7…16), for the accesses that need encryption or authentication.
    public var minimumKeySize: Int
    /// As ``GATTCharacteristicDefinition/requiresSecureConnections``: security level 4 for the
    /// accesses that need encryption or authentication.
    public var requiresSecureConnections: Bool
    public var value: [UInt8]
    public var maximumValueLength: Int
    public var onRead: GATTReadHandler?
    public var onWrite: GATTWriteHandler?

    public init(uuid: BluetoothUUID, permissions: AttributePermissions = .readable,
                minimumKeySize: Int = GATTCharacteristicDefinition.encryptionKeySizes.lowerBound, requiresSecureConnections: Bool = false,
                value: [UInt8] = [], maximumValueLength: Int = GATTCharacteristicDefinition.maximumAttributeValueLength,
                onRead: GATTReadHandler? = nil, onWrite: GATTWriteHandler? = nil) {
        self.uuid = uuid
        self.permissions = permissions
        self.minimumKeySize = minimumKeySize
        self.requiresSecureConnections = requiresSecureConnections
        self.value = value
        self.maximumValueLength = maximumValueLength
        self.onRead = onRead
        self.onWrite = onWrite
    }
}

/// The Characteristic Presentation Format descriptor value (Core 6.0, Vol 3, Part G,
/// 3.3.3.5): seven octets, format, exponent, unit, name space, description.
public struct GATTPresentationFormat: Sendable, Hashable {
    /// The format (Assigned Numbers 2.4.1), e.g. 0x04 uint8, 0x06 uint16, 0x19 utf8s.
    public var format: UInt8
    /// The value is multiplied by 10 to this power.
    public var exponent: Int8
    /// The unit UUID (Assigned Numbers 3.5), e.g. 0x27AD for percentage.
    public var unit: UInt16
    /// 0x01 for the Bluetooth SIG name space.
    public var namespace: UInt8
    public var descriptionValue: UInt16

    public init(format: UInt8, exponent: Int8 = 0, unit: UInt16 = 0x2700, namespace: UInt8 = 0x01, description: UInt16 = 0x0000) {
        self.format = format
        self.exponent = exponent
        self.unit = unit
        self.namespace = namespace
        self.descriptionValue = description
    }

    /// The descriptor's seven octets, little-endian.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 7)
        writer.write(format)
        writer.write(exponent)
        writer.write(unit)
        writer.write(namespace)
        writer.write(descriptionValue)
        return writer.bytes
    }

    /// Reads the seven octets.
    public init(bytes: [UInt8]) throws(PacketDecodingError) {
        var reader = ByteReader(bytes, context: "Characteristic Presentation Format")
        format = try reader.readUInt8()
        exponent = try reader.readInt8()
        unit = try reader.readUInt16()
        namespace = try reader.readUInt8()
        descriptionValue = try reader.readUInt16()
        try reader.expectEnd()
    }
}
