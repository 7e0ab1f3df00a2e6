import BluetoothCore

/// One attribute of this device's database (Core 6.0, Vol 3, Part F, 3.2): handle, type,
/// value and permissions, with what the server needs to serve it.
struct ServerAttribute: Sendable {
    enum Kind: Sendable, Equatable {
        /// A primary or secondary service declaration: a grouping attribute that ends at `endHandle`.
        case service(endHandle: UInt16)
        case include
        case characteristicDeclaration
        /// A characteristic value.
        case value(properties: CharacteristicProperties)
        /// A Client Characteristic Configuration descriptor: its value is kept per connection
        /// (Core 6.0, Vol 3, Part G, 3.3.3.3).
        case clientConfiguration(valueHandle: UInt16, properties: CharacteristicProperties)
        case descriptor
    }

    let handle: UInt16
    let type: BluetoothUUID
    let kind: Kind
    let permissions: AttributePermissions
    var value: [UInt8]
    let maximumLength: Int
    /// The shortest encryption key, in octets, for the accesses that need encryption.
    let minimumKeySize: Int
    /// The accesses that need encryption need security level 4 (LE Secure Connections,
    /// authenticated, a 128-bit key).
    let requiresSecureConnections: Bool
    /// A characteristic value: a bonded client subscribed to notifications gets the latest value
    /// on its return when it changed while the client was away.
    let notifiesLatestValueOnReconnection: Bool
    let onRead: GATTReadHandler?
    let onWrite: GATTWriteHandler?

    init(handle: UInt16, type: BluetoothUUID, kind: Kind, permissions: AttributePermissions, value: [UInt8],
         maximumLength: Int? = nil, minimumKeySize: Int = GATTCharacteristicDefinition.encryptionKeySizes.lowerBound,
         requiresSecureConnections: Bool = false, notifiesLatestValueOnReconnection: Bool = false,
         onRead: GATTReadHandler? = nil, onWrite: GATTWriteHandler? = nil) {
        self.handle = handle
        self.type = type
        self.kind = kind
        self.permissions = permissions
        self.value = value
        self.maximumLength = maximumLength ?? value.count
        self.minimumKeySize = minimumKeySize
        self.requiresSecureConnections = requiresSecureConnections
        self.notifiesLatestValueOnReconnection = notifiesLatestValueOnReconnection
        self.onRead = onRead
        self.onWrite = onWrite
    }

    /// What a read of the attribute asks of the link.
    var readRequirement: AttributeSecurityRequirement {
        AttributeSecurityRequirement(permissions: permissions, minimumKeySize: minimumKeySize, secureConnections: requiresSecureConnections,
                                     write: false)
    }

    /// What a write of the attribute asks of the link.
    var writeRequirement: AttributeSecurityRequirement {
        AttributeSecurityRequirement(permissions: permissions, minimumKeySize: minimumKeySize, secureConnections: requiresSecureConnections,
                                     write: true)
    }

    /// The end of the group of a grouping attribute, else the handle itself (Core 6.0, Vol 3,
    /// Part F, 3.4.3.4).
    var groupEndHandle: UInt16 {
        if case let .service(end) = kind { return end }
        return handle
    }

    var isServiceDeclaration: Bool {
        if case .service = kind { return true }
        return false
    }
}
