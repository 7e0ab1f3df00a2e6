import BluetoothCore

extension GATTClient {
    /// Discover All Primary Services (Core 6.0, Vol 3, Part G, 4.4.1).
    /// Answered from the known database, if there is one (``knownDatabase``).
    public func discoverAllPrimaryServices() async throws -> [GATTService] {
        if let known = knownServices(uuid: nil) { return known }
        var services: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            let response: ATTPDU
            do {
                response = try await request(.readByGroupTypeRequest(.init(
                    startingHandle: start, endingHandle: 0xFFFF, attributeGroupType: GATTAttributeType.primaryService)))
            } catch HostError.att(let error) where error.code == .attributeNotFound {
                break
            }
            guard case let .readByGroupTypeResponse(groups) = response else { throw unexpected(response) }
            var previousEnd: UInt16?
            for group in groups.entries {
                guard let uuid = BluetoothUUID(littleEndianBytes: group.value) else {
                    throw HostError.protocolViolation("service declaration \(Hex.format(group.handle)) holds no UUID")
                }
                // Groups come in ascending handle order, each after the one before
                // (Core 6.0, Vol 3, Part F, 3.4.4.10).
                guard group.handle >= start, previousEnd.map({ group.handle > $0 }) ?? true, group.endGroupHandle >= group.handle else {
                    throw HostError.protocolViolation("service handle range \(Hex.format(group.handle))-\(Hex.format(group.endGroupHandle)) is out of order")
                }
                services.append(GATTService(uuid: uuid, isPrimary: true, handleRange: group.handle...group.endGroupHandle))
                previousEnd = group.endGroupHandle
            }
            guard let last = groups.entries.last?.endGroupHandle, last < 0xFFFF else { break }
            start = last + 1
        }
        remember(services)
        return services
    }

    /// Discover Primary Service by Service UUID (Core 6.0, Vol 3, Part G, 4.4.2).
    public func discoverPrimaryServices(uuid: BluetoothUUID) async throws -> [GATTService] {
        if let known = knownServices(uuid: uuid) { return known }
        var services: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            let response: ATTPDU
            do {
                response = try await request(.findByTypeValueRequest(.init(
                    startingHandle: start, endingHandle: 0xFFFF,
                    attributeType: 0x2800, attributeValue: uuid.attBytes)))
            } catch HostError.att(let error) where error.code == .attributeNotFound {
                break
            }
            guard case let .findByTypeValueResponse(found) = response else { throw unexpected(response) }
            var previousEnd: UInt16?
            for entry in found.handlesInformation {
                guard entry.foundAttributeHandle >= start, previousEnd.map({ entry.foundAttributeHandle > $0 }) ?? true,
                      entry.groupEndHandle >= entry.foundAttributeHandle else {
                    throw HostError.protocolViolation("service handle range out of order")
                }
                services.append(GATTService(uuid: uuid, isPrimary: true, handleRange: entry.foundAttributeHandle...entry.groupEndHandle))
                previousEnd = entry.groupEndHandle
            }
            guard let last = found.handlesInformation.last?.groupEndHandle, last < 0xFFFF else { break }
            start = last + 1
        }
        remember(services)
        return services
    }

    /// Find Included Services (Core 6.0, Vol 3, Part G, 4.5.1). An included service with a
    /// 128-bit UUID has no UUID in its declaration; it is read from the service itself.
    public func discoverIncludedServices(of service: GATTService) async throws -> [GATTIncludedService] {
        if let known = known(service) { return known.includedServices }
        var included: [GATTIncludedService] = []
        for entry in try await readByType(GATTAttributeType.include, in: service.handleRange) {
            var reader = ByteReader(entry.value, context: "include declaration")
            let start: UInt16, end: UInt16
            do {
                start = try reader.readUInt16()
                end = try reader.readUInt16()
            } catch {
                throw HostError.protocolViolation("malformed include declaration at \(Hex.format(entry.handle)): \(error)")
            }
            guard end >= start else { throw HostError.protocolViolation("included service range out of order") }
            let uuid: BluetoothUUID?
            if reader.remainingCount == 2 {
                uuid = BluetoothUUID(littleEndianBytes: reader.readRemaining())
            } else {
                uuid = BluetoothUUID(littleEndianBytes: try await readValue(handle: start))
            }
            guard let uuid else { throw HostError.protocolViolation("included service \(Hex.format(start)) holds no UUID") }
            included.append(GATTIncludedService(declarationHandle: entry.handle,
                                                service: GATTService(uuid: uuid, isPrimary: false, handleRange: start...end)))
        }
        return included
    }

    /// Discover All Characteristics of a Service, or those of one UUID
    /// (Core 6.0, Vol 3, Part G, 4.6.1 and 4.6.2).
    public func discoverCharacteristics(of service: GATTService, uuid: BluetoothUUID? = nil) async throws -> [GATTCharacteristic] {
        if let known = known(service) {
            return known.characteristics.map(\.characteristic).filter { uuid == nil || $0.uuid == uuid }
        }
        var declarations: [(handle: UInt16, properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID)] = []
        for entry in try await readByType(GATTAttributeType.characteristic, in: service.handleRange) {
            var reader = ByteReader(entry.value, context: "characteristic declaration")
            let properties: CharacteristicProperties, valueHandle: UInt16
            do {
                properties = CharacteristicProperties(rawValue: try reader.readUInt8())
                valueHandle = try reader.readUInt16()
            } catch {
                throw HostError.protocolViolation("malformed characteristic declaration at \(Hex.format(entry.handle)): \(error)")
            }
            guard let characteristicUUID = BluetoothUUID(littleEndianBytes: reader.readRemaining()),
                  valueHandle > entry.handle, service.handleRange.contains(valueHandle) else {
                throw HostError.protocolViolation("malformed characteristic declaration at \(Hex.format(entry.handle))")
            }
            declarations.append((entry.handle, properties, valueHandle, characteristicUUID))
        }
        var characteristics: [GATTCharacteristic] = []
        for (index, declaration) in declarations.enumerated() {
            // A characteristic ends where the next one starts, or with its service.
            let end = index + 1 < declarations.count ? declarations[index + 1].handle - 1 : service.handleRange.upperBound
            characteristics.append(GATTCharacteristic(uuid: declaration.uuid, properties: declaration.properties,
                                                      declarationHandle: declaration.handle, valueHandle: declaration.valueHandle,
                                                      endHandle: max(end, declaration.valueHandle)))
        }
        if let uuid { characteristics = characteristics.filter { $0.uuid == uuid } }
        return characteristics
    }

    /// Discover All Characteristic Descriptors (Core 6.0, Vol 3, Part G, 4.7.1).
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        guard let range = characteristic.descriptorRange else { return [] }
        if let known = known(characteristic) { return known.descriptors }
        var descriptors: [GATTDescriptor] = []
        var start = range.lowerBound
        while start <= range.upperBound {
            let response: ATTPDU
            do {
                response = try await request(.findInformationRequest(.init(startingHandle: start, endingHandle: range.upperBound)))
            } catch HostError.att(let error) where error.code == .attributeNotFound {
                break
            }
            guard case let .findInformationResponse(information) = response else { throw unexpected(response) }
            try Self.requireAscending(information.entries.map(\.handle), in: start...range.upperBound, what: "Find Information")
            guard let last = information.entries.last?.handle else {
                throw HostError.protocolViolation("Find Information response with no entry")
            }
            descriptors += information.entries.map { GATTDescriptor(uuid: $0.type, handle: $0.handle) }
            guard last < range.upperBound else { break }
            start = last + 1
        }
        return descriptors
    }

    /// The first characteristic of that UUID in the first primary service of that UUID,
    /// discovered by UUID; throws ``HostError/notFound(_:)`` naming what is missing.
    public func characteristic(_ characteristicUUID: BluetoothUUID, inService serviceUUID: BluetoothUUID) async throws -> GATTCharacteristic {
        guard let service = try await discoverPrimaryServices(uuid: serviceUUID).first else {
            throw HostError.notFound("service \(serviceUUID)")
        }
        guard let characteristic = try await discoverCharacteristics(of: service, uuid: characteristicUUID).first else {
            throw HostError.notFound("characteristic \(characteristicUUID) in service \(serviceUUID)")
        }
        return characteristic
    }

    /// Discovers every service, characteristic and descriptor: the whole database.
    /// The known database (``knownDatabase``) when there is one.
    public func discoverDatabase() async throws -> [GATTDiscoveredService] {
        if let known = knownDatabase { return known }
        var database: [GATTDiscoveredService] = []
        for service in try await discoverAllPrimaryServices() {
            var characteristics: [GATTDiscoveredCharacteristic] = []
            for characteristic in try await discoverCharacteristics(of: service) {
                characteristics.append(GATTDiscoveredCharacteristic(
                    characteristic: characteristic, descriptors: try await discoverDescriptors(of: characteristic)))
            }
            let included = try await discoverIncludedServices(of: service)
            database.append(GATTDiscoveredService(service: service, includedServices: included, characteristics: characteristics))
        }
        return database
    }

    /// Read By Type over a handle range, following the pages until the range is exhausted.
    func readByType(_ type: BluetoothUUID, in range: ClosedRange<UInt16>,
                    stopAfterFirstPage: Bool = false) async throws -> [ATTReadByTypeResponse.AttributeData] {
        var entries: [ATTReadByTypeResponse.AttributeData] = []
        var start = range.lowerBound
        while start <= range.upperBound {
            let response: ATTPDU
            do {
                response = try await request(.readByTypeRequest(.init(startingHandle: start, endingHandle: range.upperBound, attributeType: type)))
            } catch HostError.att(let error) where error.code == .attributeNotFound {
                break
            }
            guard case let .readByTypeResponse(page) = response else { throw unexpected(response) }
            try Self.requireAscending(page.entries.map(\.handle), in: start...range.upperBound, what: "Read By Type")
            guard let last = page.entries.last?.handle else {
                throw HostError.protocolViolation("Read By Type response with no entry")
            }
            entries += page.entries
            guard !stopAfterFirstPage, last < range.upperBound else { break }
            start = last + 1
        }
        return entries
    }

    /// The handles of a response page must be in the requested range, in ascending order
    /// (Core 6.0, Vol 3, Part F, 3.4.3.2 and 3.4.4.2): anything else is a lying or broken peer,
    /// and the handle arithmetic of discovery would not hold.
    static func requireAscending(_ handles: [UInt16], in range: ClosedRange<UInt16>, what: String) throws(HostError) {
        var previous: UInt16?
        for handle in handles {
            guard range.contains(handle), previous.map({ handle > $0 }) ?? true else {
                throw .protocolViolation("\(what) response lists handle \(Hex.format(handle)) out of order or outside "
                                         + "\(Hex.format(range.lowerBound))-\(Hex.format(range.upperBound))")
            }
            previous = handle
        }
    }

    private func remember(_ services: [GATTService]) {
        state.withLock { state in
            for service in services where !state.discoveredServices.contains(service) {
                state.discoveredServices.append(service)
            }
        }
    }
}

/// A service with everything discovered inside it.
public struct GATTDiscoveredService: Sendable, Equatable, Codable {
    public var service: GATTService
    public var includedServices: [GATTIncludedService]
    public var characteristics: [GATTDiscoveredCharacteristic]

    public init(service: GATTService, includedServices: [GATTIncludedService] = [], characteristics: [GATTDiscoveredCharacteristic]) {
        self.service = service
        self.includedServices = includedServices
        self.characteristics = characteristics
    }
}

/// A characteristic with its descriptors.
public struct GATTDiscoveredCharacteristic: Sendable, Equatable, Codable {
    public var characteristic: GATTCharacteristic
    public var descriptors: [GATTDescriptor]

    public init(characteristic: GATTCharacteristic, descriptors: [GATTDescriptor]) {
        self.characteristic = characteristic
        self.descriptors = descriptors
    }

    /// The Client Characteristic Configuration descriptor, if the characteristic has one.
    public var clientConfigurationHandle: UInt16? {
        descriptors.first { $0.uuid == GATTAttributeType.clientCharacteristicConfiguration }?.handle
    }
}
