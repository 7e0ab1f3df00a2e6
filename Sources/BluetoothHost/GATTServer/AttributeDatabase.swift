import BluetoothCore

/// This device's attribute database: the attributes of every published service in handle
/// order, with no gaps inside a service. A plain value with no I/O; ``GATTServer`` serves it.
///
/// The GAP service (Device Name, Appearance) and the GATT service (Service Changed, Client
/// Supported Features, Database Hash) are always first (Core 6.0, Vol 3, Part G, 7), at the handles below. Services are added after
/// the last attribute; removing the last service frees its handles for the next one.
struct AttributeDatabase: Sendable {
    /// A published service and the services it includes (by declaration handle).
    private struct ServiceRecord: Sendable {
        var published: GATTPublishedService
        var includedStarts: [UInt16]
    }

    static let gapServiceHandle: UInt16 = 0x0001
    static let deviceNameHandle: UInt16 = 0x0003
    static let appearanceHandle: UInt16 = 0x0005
    static let gattServiceHandle: UInt16 = 0x0006
    static let serviceChangedHandle: UInt16 = 0x0008
    static let serviceChangedConfigurationHandle: UInt16 = 0x0009
    static let clientSupportedFeaturesHandle: UInt16 = 0x000B
    static let databaseHashHandle: UInt16 = 0x000D
    /// The last handle of the GATT service: the application's services come after it.
    static let gattServiceEndHandle: UInt16 = 0x000D

    /// Sorted by handle.
    private(set) var attributes: [ServerAttribute] = []
    private var records: [ServiceRecord] = []

    init(deviceName: String = "Bluejay", appearance: UInt16 = 0x0000) {
        // The GAP service (Core 6.0, Vol 3, Part C, 12): Device Name and Appearance, readable.
        // Device Name is at most 248 octets (Vol 3, Part C, 12.1).
        let gap = GATTServiceDefinition(uuid: GATTAttributeType.gapService, characteristics: [
            GATTCharacteristicDefinition(uuid: GATTAttributeType.deviceName, properties: .read,
                                         value: Self.deviceNameBytes(deviceName), maximumValueLength: 248),
            GATTCharacteristicDefinition(uuid: GATTAttributeType.appearance, properties: .read,
                                         value: Self.appearanceBytes(appearance), maximumValueLength: 2),
        ])
        // The GATT service (Vol 3, Part G, 7): Service Changed, indicate only, not readable;
        // Client Supported Features (one octet per client, kept by the server) and Database
        // Hash (computed when read): this server does robust caching (Vol 3, Part G, 2.5.2.1).
        let gatt = GATTServiceDefinition(uuid: GATTAttributeType.gattService, characteristics: [
            GATTCharacteristicDefinition(uuid: GATTAttributeType.serviceChanged, properties: .indicate,
                                         permissions: [], value: [0, 0, 0, 0], maximumValueLength: 4),
            GATTCharacteristicDefinition(uuid: GATTAttributeType.clientSupportedFeatures, properties: [.read, .write],
                                         permissions: .readWrite, value: [0], maximumValueLength: 1),
            GATTCharacteristicDefinition(uuid: GATTAttributeType.databaseHash, properties: .read,
                                         permissions: .readable, value: [], maximumValueLength: 16),
        ])
        // Fixed definitions within the limits: these cannot fail.
        _ = try? add(gap)
        _ = try? add(gatt)
    }

    static func deviceNameBytes(_ name: String) -> [UInt8] {
        var bytes = Array(name.utf8.prefix(248))
        // Never cut a UTF-8 sequence in half.
        while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        return bytes
    }

    static func appearanceBytes(_ appearance: UInt16) -> [UInt8] {
        var writer = ByteWriter(capacity: 2)
        writer.write(appearance)
        return writer.bytes
    }

    // MARK: Lookup

    /// The published services in handle order, the GAP and GATT services first.
    var services: [GATTPublishedService] { records.map(\.published) }

    var lastHandle: UInt16 { attributes.last?.handle ?? 0 }

    /// The index of the attribute with `handle`, by binary search.
    func index(of handle: UInt16) -> Int? {
        var low = 0
        var high = attributes.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let candidate = attributes[middle].handle
            if candidate == handle { return middle }
            if candidate < handle { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }

    func attribute(at handle: UInt16) -> ServerAttribute? {
        index(of: handle).map { attributes[$0] }
    }

    /// The attributes whose handles are in `range`, in order.
    func attributes(in range: ClosedRange<UInt16>) -> ArraySlice<ServerAttribute> {
        var low = 0
        var high = attributes.count
        while low < high {
            let middle = (low + high) / 2
            if attributes[middle].handle < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < attributes.count, attributes[end].handle <= range.upperBound { end += 1 }
        return attributes[low..<end]
    }

    /// The published characteristic whose value has this handle.
    func characteristic(valueHandle: UInt16) -> GATTPublishedCharacteristic? {
        for record in records where record.published.handleRange.contains(valueHandle) {
            return record.published.characteristics.first { $0.valueHandle == valueHandle }
        }
        return nil
    }

    /// The Database Hash of the attributes as they are now (Core 6.0, Vol 3, Part G, 7.3.1).
    var hash: GATTDatabaseHash {
        GATTDatabaseHash(attributes: attributes.lazy.map { GATTDatabaseHash.Attribute(handle: $0.handle, type: $0.type, value: $0.value) })
    }

    // MARK: Values

    mutating func setValue(_ value: [UInt8], at handle: UInt16) {
        guard let index = index(of: handle) else { return }
        attributes[index].value = value
    }

    // MARK: Adding and removing services

    /// Adds a service after the last attribute and returns where it went.
    mutating func add(_ definition: GATTServiceDefinition) throws(GATTServerError) -> GATTPublishedService {
        try Self.validate(definition)
        var included: [ServiceRecord] = []
        for uuid in definition.includedServices {
            guard let record = records.first(where: { $0.published.uuid == uuid }) else {
                throw .includedServiceNotFound(uuid)
            }
            included.append(record)
        }
        let count = Self.attributeCount(of: definition)
        let start = Int(lastHandle) + 1
        guard start + count - 1 <= Int(UInt16.max) else { throw .databaseFull(needed: count) }

        var built = ServiceBuilder(start: UInt16(start))
        let end = UInt16(start + count - 1)
        built.append(type: definition.isPrimary ? GATTAttributeType.primaryService : GATTAttributeType.secondaryService,
                     kind: .service(endHandle: end), permissions: .readable, value: definition.uuid.attBytes)
        for record in included {
            // Include declaration: start, end, and the UUID only when it is 16-bit (Vol 3, Part G, 3.2).
            var writer = ByteWriter(capacity: 6)
            writer.write(record.published.handleRange.lowerBound)
            writer.write(record.published.handleRange.upperBound)
            if let short = record.published.uuid.uint16 { writer.write(short) }
            built.append(type: GATTAttributeType.include, kind: .include, permissions: .readable, value: writer.bytes)
        }
        var characteristics: [GATTPublishedCharacteristic] = []
        for characteristic in definition.characteristics {
            characteristics.append(built.append(characteristic))
        }
        let published = GATTPublishedService(uuid: definition.uuid, isPrimary: definition.isPrimary,
                                             handleRange: UInt16(start)...end, characteristics: characteristics)
        attributes += built.attributes
        records.append(ServiceRecord(published: published, includedStarts: included.map(\.published.handleRange.lowerBound)))
        return published
    }

    /// Removes the service whose declaration is at `startHandle`; returns its handle range.
    mutating func removeService(at startHandle: UInt16) throws(GATTServerError) -> GATTPublishedService {
        guard let index = records.firstIndex(where: { $0.published.handleRange.lowerBound == startHandle }) else {
            throw .unknownService(startHandle)
        }
        let published = records[index].published
        if startHandle == Self.gapServiceHandle || startHandle == Self.gattServiceHandle {
            throw .mandatoryService(published.uuid)
        }
        if let including = records.first(where: { $0.includedStarts.contains(startHandle) }) {
            throw .serviceIsIncluded(published.uuid, by: including.published.uuid)
        }
        records.remove(at: index)
        attributes.removeAll { published.handleRange.contains($0.handle) }
        return published
    }

    /// The services the application added (all but GAP and GATT), in handle order.
    var applicationServices: [GATTPublishedService] {
        services.filter { $0.handleRange.lowerBound > Self.gattServiceEndHandle }
    }

    // MARK: Building

    private static func validate(_ definition: GATTServiceDefinition) throws(GATTServerError) {
        let automatic: Set<BluetoothUUID> = [
            GATTAttributeType.clientCharacteristicConfiguration, GATTAttributeType.primaryService,
            GATTAttributeType.secondaryService, GATTAttributeType.include, GATTAttributeType.characteristic,
        ]
        for characteristic in definition.characteristics {
            let name = "characteristic \(characteristic.uuid)"
            guard (0...GATTCharacteristicDefinition.maximumAttributeValueLength).contains(characteristic.maximumValueLength) else {
                throw .invalidDefinition("\(name) allows \(characteristic.maximumValueLength) bytes; an attribute value holds 0 to 512")
            }
            guard characteristic.value.count <= characteristic.maximumValueLength else {
                throw .invalidDefinition("\(name) starts with \(characteristic.value.count) bytes but allows \(characteristic.maximumValueLength)")
            }
            let keySizes = GATTCharacteristicDefinition.encryptionKeySizes
            guard keySizes.contains(characteristic.minimumKeySize) else {
                throw .invalidDefinition("\(name) asks for keys of at least \(characteristic.minimumKeySize) octets; keys have 7 to 16")
            }
            if let text = characteristic.userDescription, text.utf8.count > GATTCharacteristicDefinition.maximumAttributeValueLength {
                throw .invalidDefinition("the user description of \(name) is longer than 512 bytes")
            }
            for descriptor in characteristic.descriptors {
                guard !automatic.contains(descriptor.uuid) else {
                    throw .invalidDefinition("descriptor \(descriptor.uuid) of \(name) is added by the server itself")
                }
                guard keySizes.contains(descriptor.minimumKeySize) else {
                    throw .invalidDefinition("descriptor \(descriptor.uuid) of \(name) asks for keys of at least \(descriptor.minimumKeySize) octets; keys have 7 to 16")
                }
                guard (0...GATTCharacteristicDefinition.maximumAttributeValueLength).contains(descriptor.maximumValueLength),
                      descriptor.value.count <= descriptor.maximumValueLength else {
                    throw .invalidDefinition("descriptor \(descriptor.uuid) of \(name) has a value longer than it allows (at most 512)")
                }
            }
        }
    }

    private static func attributeCount(of definition: GATTServiceDefinition) -> Int {
        1 + definition.includedServices.count + definition.characteristics.reduce(0) { count, characteristic in
            count + 2
                + (characteristic.properties.isDisjoint(with: [.notify, .indicate]) ? 0 : 1)
                + (characteristic.userDescription == nil ? 0 : 1)
                + (characteristic.presentationFormat == nil ? 0 : 1)
                + characteristic.descriptors.count
        }
    }
}

/// Lays out the attributes of one service at consecutive handles.
private struct ServiceBuilder {
    private(set) var attributes: [ServerAttribute] = []
    private var next: UInt16

    init(start: UInt16) { next = start }

    @discardableResult
    mutating func append(type: BluetoothUUID, kind: ServerAttribute.Kind, permissions: AttributePermissions, value: [UInt8],
                         maximumLength: Int? = nil, minimumKeySize: Int = GATTCharacteristicDefinition.encryptionKeySizes.lowerBound,
                         requiresSecureConnections: Bool = false, notifiesLatestValueOnReconnection: Bool = false,
                         onRead: GATTReadHandler? = nil, onWrite: GATTWriteHandler? = nil) -> UInt16 {
        let handle = next
        attributes.append(ServerAttribute(handle: handle, type: type, kind: kind, permissions: permissions, value: value,
                                          maximumLength: maximumLength, minimumKeySize: minimumKeySize,
                                          requiresSecureConnections: requiresSecureConnections,
                                          notifiesLatestValueOnReconnection: notifiesLatestValueOnReconnection, onRead: onRead, onWrite: onWrite))
        // The caller counted the attributes first, so the last one is at most 0xFFFF.
        next = handle == .max ? handle : handle + 1
        return handle
    }

    /// A characteristic declaration, its value, then its descriptors (Core 6.0, Vol 3, Part G, 3.3).
    mutating func append(_ definition: GATTCharacteristicDefinition) -> GATTPublishedCharacteristic {
        let declarationHandle = next
        let valueHandle = declarationHandle &+ 1
        var declaration = ByteWriter(capacity: 19)
        declaration.write(definition.properties.rawValue)
        declaration.write(valueHandle)
        declaration.write(contentsOf: definition.uuid.attBytes)
        append(type: GATTAttributeType.characteristic, kind: .characteristicDeclaration, permissions: .readable, value: declaration.bytes)
        append(type: definition.uuid, kind: .value(properties: definition.properties), permissions: definition.permissions,
               value: definition.value, maximumLength: definition.maximumValueLength, minimumKeySize: definition.minimumKeySize,
               requiresSecureConnections: definition.requiresSecureConnections,
               notifiesLatestValueOnReconnection: definition.notifiesLatestValueOnReconnection,
               onRead: definition.onRead, onWrite: definition.onWrite)
        var descriptors: [GATTDescriptor] = []
        var configurationHandle: UInt16?
        if !definition.properties.isDisjoint(with: [.notify, .indicate]) {
            // Readable by any client with no security; writes as the definition says
            // (Core 6.0, Vol 3, Part G, 3.3.3.3).
            let permissions = AttributePermissions.readWrite.union(
                definition.clientConfigurationPermissions.intersection(AttributePermissions.writeRequirements))
            let handle = append(type: GATTAttributeType.clientCharacteristicConfiguration,
                                kind: .clientConfiguration(valueHandle: valueHandle, properties: definition.properties),
                                permissions: permissions, value: [0, 0], maximumLength: 2, minimumKeySize: definition.minimumKeySize,
                                requiresSecureConnections: definition.requiresSecureConnections)
            configurationHandle = handle
            descriptors.append(GATTDescriptor(uuid: GATTAttributeType.clientCharacteristicConfiguration, handle: handle))
        }
        if let text = definition.userDescription {
            let handle = append(type: GATTAttributeType.characteristicUserDescription, kind: .descriptor,
                                permissions: .readable, value: Array(text.utf8))
            descriptors.append(GATTDescriptor(uuid: GATTAttributeType.characteristicUserDescription, handle: handle))
        }
        if let format = definition.presentationFormat {
            let handle = append(type: GATTAttributeType.characteristicPresentationFormat, kind: .descriptor,
                                permissions: .readable, value: format.bytes)
            descriptors.append(GATTDescriptor(uuid: GATTAttributeType.characteristicPresentationFormat, handle: handle))
        }
        for descriptor in definition.descriptors {
            let handle = append(type: descriptor.uuid, kind: .descriptor, permissions: descriptor.permissions, value: descriptor.value,
                                maximumLength: descriptor.maximumValueLength, minimumKeySize: descriptor.minimumKeySize,
                                requiresSecureConnections: descriptor.requiresSecureConnections,
                                onRead: descriptor.onRead, onWrite: descriptor.onWrite)
            descriptors.append(GATTDescriptor(uuid: descriptor.uuid, handle: handle))
        }
        return GATTPublishedCharacteristic(uuid: definition.uuid, properties: definition.properties,
                                           declarationHandle: declarationHandle, valueHandle: valueHandle,
                                           clientConfigurationHandle: configurationHandle, descriptors: descriptors)
    }
}
