import BluetoothCore

/// Typed reads of the common AD types (Core Specification Supplement, Part A, 1). Accessors
/// that return one value take the first well-formed structure of the type; malformed
/// structures are skipped. Each decodes only the structures of its own types.
extension AdvertisingData {
    /// The typed fields of the structures whose type is one of `types`, in order; no other
    /// structure is decoded.
    func fields(ofType types: AdvertisingDataType...) -> LazyMapSequence<LazyFilterSequence<[AdvertisingStructure]>, ADField> {
        structures.lazy.filter { types.contains($0.type) }.map(ADField.init(lenient:))
    }

    /// The Flags. The field "may be zero or more octets long" (CSS A.1.3): no octets means
    /// no flag set, and octets after the first are ignored.
    public var flags: AdvertisingFlags? {
        data(for: .flags).map { AdvertisingFlags(rawValue: $0.first ?? 0) }
    }

    /// Every service UUID listed, complete or incomplete lists, 16-, 32- and 128-bit, in order.
    public var serviceUUIDs: [BluetoothUUID] {
        fields(ofType: .incompleteServiceUUIDs16, .completeServiceUUIDs16, .incompleteServiceUUIDs32, .completeServiceUUIDs32,
                       .incompleteServiceUUIDs128, .completeServiceUUIDs128).flatMap { field -> [BluetoothUUID] in
            switch field {
            case let .serviceUUIDs16(uuids, _): return uuids.map { BluetoothUUID($0) }
            case let .serviceUUIDs32(uuids, _): return uuids.map { BluetoothUUID($0) }
            case let .serviceUUIDs128(uuids, _): return uuids
            default: return []
            }
        }
    }

    /// Whether some list of service UUIDs is marked complete.
    public var hasCompleteServiceUUIDList: Bool {
        fields(ofType: .completeServiceUUIDs16, .completeServiceUUIDs32, .completeServiceUUIDs128).contains { field in
            switch field {
            case let .serviceUUIDs16(_, complete), let .serviceUUIDs32(_, complete), let .serviceUUIDs128(_, complete):
                return complete
            default: return false
            }
        }
    }

    /// Every service solicitation UUID, of every width, in order.
    public var solicitedServiceUUIDs: [BluetoothUUID] {
        fields(ofType: .serviceSolicitationUUIDs16, .serviceSolicitationUUIDs32, .serviceSolicitationUUIDs128).flatMap { field -> [BluetoothUUID] in
            switch field {
            case let .serviceSolicitationUUIDs16(uuids): return uuids.map { BluetoothUUID($0) }
            case let .serviceSolicitationUUIDs32(uuids): return uuids.map { BluetoothUUID($0) }
            case let .serviceSolicitationUUIDs128(uuids): return uuids
            default: return []
            }
        }
    }

    public var completeLocalName: String? {
        fields(ofType: .completeLocalName).compactMap { if case let .completeLocalName(name) = $0 { return name } else { return nil } }.first
    }

    public var shortenedLocalName: String? {
        fields(ofType: .shortenedLocalName).lazy.compactMap { if case let .shortenedLocalName(name) = $0 { return name } else { return nil } }.first
    }

    /// The complete local name, else the shortened one.
    public var localName: String? { completeLocalName ?? shortenedLocalName }

    /// TX Power Level in dBm.
    public var txPowerLevel: Int8? {
        fields(ofType: .txPowerLevel).lazy.compactMap { if case let .txPowerLevel(value) = $0 { return value } else { return nil } }.first
    }

    /// The Peripheral Connection Interval Range, units of 1.25 ms (0xFFFF = no preference).
    public var peripheralConnectionIntervalRange: (min: UInt16, max: UInt16)? {
        for case let .peripheralConnectionIntervalRange(min, max) in fields(ofType: .peripheralConnectionIntervalRange) { return (min, max) }
        return nil
    }

    /// All service data, of every UUID width, in order.
    public var serviceData: [ServiceData] {
        fields(ofType: .serviceData16, .serviceData32, .serviceData128).compactMap { field -> ServiceData? in
            switch field {
            case let .serviceData16(uuid, data): return ServiceData(uuid: BluetoothUUID(uuid), data: data)
            case let .serviceData32(uuid, data): return ServiceData(uuid: BluetoothUUID(uuid), data: data)
            case let .serviceData128(uuid, data): return ServiceData(uuid: uuid, data: data)
            default: return nil
            }
        }
    }

    /// The first service data for `uuid`, whatever width it was sent in.
    public func serviceData(for uuid: BluetoothUUID) -> [UInt8]? {
        serviceData.first { $0.uuid == uuid }?.data
    }

    public var publicTargetAddresses: [BluetoothAddress] {
        fields(ofType: .publicTargetAddress).flatMap { field -> [BluetoothAddress] in
            if case let .publicTargetAddresses(addresses) = field { return addresses } else { return [] }
        }
    }

    public var randomTargetAddresses: [BluetoothAddress] {
        fields(ofType: .randomTargetAddress).flatMap { field -> [BluetoothAddress] in
            if case let .randomTargetAddresses(addresses) = field { return addresses } else { return [] }
        }
    }

    /// The Appearance value (Assigned Numbers 2.6).
    public var appearance: UInt16? {
        fields(ofType: .appearance).lazy.compactMap { if case let .appearance(value) = $0 { return value } else { return nil } }.first
    }

    /// The advertising interval in units of 0.625 ms, from either the 0x1A or the long 0x2F form.
    public var advertisingInterval: UInt32? {
        fields(ofType: .advertisingInterval, .advertisingIntervalLong).lazy.compactMap { field -> UInt32? in
            switch field {
            case let .advertisingInterval(value): return UInt32(value)
            case let .advertisingIntervalLong(value): return value
            default: return nil
            }
        }.first
    }

    public var leBluetoothDeviceAddress: DeviceAddress? {
        fields(ofType: .leBluetoothDeviceAddress).lazy.compactMap { if case let .leBluetoothDeviceAddress(value) = $0 { return value } else { return nil } }.first
    }

    public var leRole: LERole? {
        fields(ofType: .leRole).lazy.compactMap { if case let .leRole(value) = $0 { return value } else { return nil } }.first
    }

    /// The URI, with its scheme spelled out.
    public var uri: String? {
        fields(ofType: .uri).lazy.compactMap { if case let .uri(value) = $0 { return value } else { return nil } }.first
    }

    /// The first Manufacturer Specific Data.
    public var manufacturerData: ManufacturerData? { allManufacturerData.first }

    /// Every Manufacturer Specific Data structure, in order.
    public var allManufacturerData: [ManufacturerData] {
        fields(ofType: .manufacturerSpecificData).compactMap { field -> ManufacturerData? in
            if case let .manufacturerSpecificData(companyID, data) = field {
                return ManufacturerData(companyID: companyID, data: data)
            }
            return nil
        }
    }
}
