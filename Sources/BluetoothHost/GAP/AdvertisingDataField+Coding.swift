import BluetoothCore

extension ADField {
    /// The AD structure for this field.
    public var structure: AdvertisingStructure {
        var writer = ByteWriter()
        let type: AdvertisingDataType
        switch self {
        case let .flags(flags): type = .flags; writer.write(flags.rawValue)
        case let .serviceUUIDs16(uuids, complete):
            type = complete ? .completeServiceUUIDs16 : .incompleteServiceUUIDs16
            for uuid in uuids { writer.write(uuid) }
        case let .serviceUUIDs32(uuids, complete):
            type = complete ? .completeServiceUUIDs32 : .incompleteServiceUUIDs32
            for uuid in uuids { writer.write(uuid) }
        case let .serviceUUIDs128(uuids, complete):
            type = complete ? .completeServiceUUIDs128 : .incompleteServiceUUIDs128
            for uuid in uuids { writer.write(contentsOf: uuid.littleEndianBytes128) }
        case let .shortenedLocalName(name): type = .shortenedLocalName; writer.write(contentsOf: Array(name.utf8))
        case let .completeLocalName(name): type = .completeLocalName; writer.write(contentsOf: Array(name.utf8))
        case let .txPowerLevel(power): type = .txPowerLevel; writer.write(power)
        case let .peripheralConnectionIntervalRange(min, max):
            type = .peripheralConnectionIntervalRange; writer.write(min); writer.write(max)
        case let .serviceSolicitationUUIDs16(uuids): type = .serviceSolicitationUUIDs16; for uuid in uuids { writer.write(uuid) }
        case let .serviceSolicitationUUIDs32(uuids): type = .serviceSolicitationUUIDs32; for uuid in uuids { writer.write(uuid) }
        case let .serviceSolicitationUUIDs128(uuids):
            type = .serviceSolicitationUUIDs128
            for uuid in uuids { writer.write(contentsOf: uuid.littleEndianBytes128) }
        case let .serviceData16(uuid, data): type = .serviceData16; writer.write(uuid); writer.write(contentsOf: data)
        case let .serviceData32(uuid, data): type = .serviceData32; writer.write(uuid); writer.write(contentsOf: data)
        case let .serviceData128(uuid, data):
            type = .serviceData128; writer.write(contentsOf: uuid.littleEndianBytes128); writer.write(contentsOf: data)
        case let .publicTargetAddresses(addresses):
            type = .publicTargetAddress; for address in addresses { address.write(to: &writer) }
        case let .randomTargetAddresses(addresses):
            type = .randomTargetAddress; for address in addresses { address.write(to: &writer) }
        case let .appearance(value): type = .appearance; writer.write(value)
        case let .advertisingInterval(value): type = .advertisingInterval; writer.write(value)
        case let .advertisingIntervalLong(value):
            type = .advertisingIntervalLong
            writer.writeLittleEndian(UInt64(value), byteCount: value > 0xFF_FFFF ? 4 : 3)
        case let .leBluetoothDeviceAddress(address):
            type = .leBluetoothDeviceAddress
            address.address.write(to: &writer)
            writer.write(UInt8(address.type.base == .random ? 1 : 0))
        case let .leRole(role): type = .leRole; writer.write(role.rawValue)
        case let .uri(uri): type = .uri; writer.write(contentsOf: AdvertisingURI.encode(uri))
        case let .manufacturerSpecificData(companyID, data):
            type = .manufacturerSpecificData; writer.write(companyID); writer.write(contentsOf: data)
        case let .other(otherType, data): type = otherType; writer.write(contentsOf: data)
        }
        return AdvertisingStructure(type: type, data: writer.bytes)
    }

    /// Interprets a structure, or ``other(type:data:)`` when its type is unknown or its data
    /// is malformed for the type.
    public init(lenient structure: AdvertisingStructure) {
        do {
            self = try ADField(structure)
        } catch {
            self = .other(type: structure.type, data: structure.data)
        }
    }

    /// Interprets a structure; throws when its data is malformed for its type. Unknown types
    /// give ``other(type:data:)``.
    public init(_ structure: AdvertisingStructure) throws(PacketDecodingError) {
        var reader = ByteReader(structure.data, context: "AD \(structure.type.name)")
        switch structure.type {
        // "The Flags field may be zero or more octets long" (CSS A.1.3). Only the one-octet
        // form is typed, so that re-encoding gives the same bytes; ``AdvertisingData/flags``
        // reads the other lengths too.
        case .flags:
            self = structure.data.count == 1 ? .flags(AdvertisingFlags(rawValue: structure.data[0]))
                                             : .other(type: structure.type, data: structure.data)
            return
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16:
            self = .serviceUUIDs16(try Self.readList(&reader, width: 2) { UInt16(truncatingIfNeeded: $0) },
                                   complete: structure.type == .completeServiceUUIDs16)
        case .incompleteServiceUUIDs32, .completeServiceUUIDs32:
            self = .serviceUUIDs32(try Self.readList(&reader, width: 4) { UInt32(truncatingIfNeeded: $0) },
                                   complete: structure.type == .completeServiceUUIDs32)
        case .incompleteServiceUUIDs128, .completeServiceUUIDs128:
            self = .serviceUUIDs128(try Self.readUUID128List(&reader), complete: structure.type == .completeServiceUUIDs128)
        case .shortenedLocalName: self = .shortenedLocalName(Self.string(reader.readRemaining()))
        case .completeLocalName: self = .completeLocalName(Self.string(reader.readRemaining()))
        case .txPowerLevel: self = .txPowerLevel(try reader.readInt8())
        case .peripheralConnectionIntervalRange:
            self = .peripheralConnectionIntervalRange(min: try reader.readUInt16(), max: try reader.readUInt16())
        case .serviceSolicitationUUIDs16: self = .serviceSolicitationUUIDs16(try Self.readList(&reader, width: 2) { UInt16(truncatingIfNeeded: $0) })
        case .serviceSolicitationUUIDs32: self = .serviceSolicitationUUIDs32(try Self.readList(&reader, width: 4) { UInt32(truncatingIfNeeded: $0) })
        case .serviceSolicitationUUIDs128: self = .serviceSolicitationUUIDs128(try Self.readUUID128List(&reader))
        case .serviceData16: self = .serviceData16(uuid: try reader.readUInt16(), data: reader.readRemaining())
        case .serviceData32: self = .serviceData32(uuid: try reader.readUInt32(), data: reader.readRemaining())
        case .serviceData128:
            self = .serviceData128(uuid: try Self.readUUID128(&reader), data: reader.readRemaining())
        case .publicTargetAddress: self = .publicTargetAddresses(try Self.readAddresses(&reader))
        case .randomTargetAddress: self = .randomTargetAddresses(try Self.readAddresses(&reader))
        case .appearance: self = .appearance(try reader.readUInt16())
        case .advertisingInterval: self = .advertisingInterval(try reader.readUInt16())
        case .advertisingIntervalLong:
            guard reader.remainingCount == 3 || reader.remainingCount == 4 else {
                throw .invalidValue(context: reader.context, field: "length", value: UInt64(reader.remainingCount))
            }
            self = .advertisingIntervalLong(UInt32(try reader.readLittleEndian(byteCount: reader.remainingCount)))
        case .leBluetoothDeviceAddress:
            let address = try BluetoothAddress(reading: &reader)
            let flag = try reader.readUInt8()
            self = .leBluetoothDeviceAddress(DeviceAddress(address, type: flag & 1 == 1 ? .random : .public))
        case .leRole:
            let raw = try reader.readUInt8()
            guard let role = AdvertisingData.LERole(rawValue: raw) else {
                throw .invalidValue(context: reader.context, field: "role", value: UInt64(raw))
            }
            self = .leRole(role)
        case .uri: self = .uri(try AdvertisingURI.decode(reader.readRemaining(), context: reader.context))
        case .manufacturerSpecificData:
            self = .manufacturerSpecificData(companyID: try reader.readUInt16(), data: reader.readRemaining())
        default:
            self = .other(type: structure.type, data: structure.data)
        }
        try reader.expectEnd()
    }

    /// Names may be cut inside a UTF-8 sequence (a shortened name); decode what is there.
    private static func string(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private static func readList<T>(_ reader: inout ByteReader, width: Int,
                                    _ make: (UInt64) -> T) throws(PacketDecodingError) -> [T] {
        guard reader.remainingCount % width == 0 else {
            throw .invalidValue(context: reader.context, field: "list length", value: UInt64(reader.remainingCount))
        }
        var values: [T] = []
        while !reader.isAtEnd { values.append(make(try reader.readLittleEndian(byteCount: width))) }
        return values
    }

    private static func readUUID128(_ reader: inout ByteReader) throws(PacketDecodingError) -> BluetoothUUID {
        let bytes = try reader.readBytes(16)
        guard let uuid = BluetoothUUID(littleEndianBytes: bytes) else {
            throw .invalidValue(context: reader.context, field: "UUID length", value: UInt64(bytes.count))
        }
        return uuid
    }

    private static func readUUID128List(_ reader: inout ByteReader) throws(PacketDecodingError) -> [BluetoothUUID] {
        guard reader.remainingCount % 16 == 0 else {
            throw .invalidValue(context: reader.context, field: "list length", value: UInt64(reader.remainingCount))
        }
        var uuids: [BluetoothUUID] = []
        while !reader.isAtEnd { uuids.append(try readUUID128(&reader)) }
        return uuids
    }

    private static func readAddresses(_ reader: inout ByteReader) throws(PacketDecodingError) -> [BluetoothAddress] {
        guard !reader.isAtEnd, reader.remainingCount % 6 == 0 else {
            throw .invalidValue(context: reader.context, field: "address list length", value: UInt64(reader.remainingCount))
        }
        var addresses: [BluetoothAddress] = []
        while !reader.isAtEnd { addresses.append(try BluetoothAddress(reading: &reader)) }
        return addresses
    }

    var valueDescription: String {
        switch self {
        case let .flags(flags): return "\(flags)"
        case let .serviceUUIDs16(uuids, _): return uuids.map { "\(BluetoothUUID($0))" }.joined(separator: ", ")
        case let .serviceUUIDs32(uuids, _): return uuids.map { "\(BluetoothUUID($0))" }.joined(separator: ", ")
        case let .serviceUUIDs128(uuids, _): return uuids.map(\.description).joined(separator: ", ")
        case let .shortenedLocalName(name), let .completeLocalName(name), let .uri(name): return "\"\(name)\""
        case let .txPowerLevel(power): return "\(power) dBm"
        case let .peripheralConnectionIntervalRange(min, max): return "\(min)…\(max) × 1.25 ms"
        case let .serviceSolicitationUUIDs16(uuids): return uuids.map { "\(BluetoothUUID($0))" }.joined(separator: ", ")
        case let .serviceSolicitationUUIDs32(uuids): return uuids.map { "\(BluetoothUUID($0))" }.joined(separator: ", ")
        case let .serviceSolicitationUUIDs128(uuids): return uuids.map(\.description).joined(separator: ", ")
        case let .serviceData16(uuid, data): return "\(BluetoothUUID(uuid)) \(Hex.encode(data, separator: " "))"
        case let .serviceData32(uuid, data): return "\(BluetoothUUID(uuid)) \(Hex.encode(data, separator: " "))"
        case let .serviceData128(uuid, data): return "\(uuid) \(Hex.encode(data, separator: " "))"
        case let .publicTargetAddresses(addresses), let .randomTargetAddresses(addresses):
            return addresses.map(\.description).joined(separator: ", ")
        case let .appearance(value): return Hex.format(value, digits: 4)
        case let .advertisingInterval(value): return "\(value) × 0.625 ms"
        case let .advertisingIntervalLong(value): return "\(value) × 0.625 ms"
        case let .leBluetoothDeviceAddress(address): return "\(address)"
        case let .leRole(role): return "\(role)"
        case let .manufacturerSpecificData(companyID, data):
            return "company \(Hex.format(companyID, digits: 4)) \(Hex.encode(data, separator: " "))"
        case let .other(_, data): return Hex.encode(data, separator: " ")
        }
    }
}
