import BluetoothCore

/// Typed reads of the common AD types (Core Specification Supplement, Part A, 1). Accessors
/// that return one value take the first well-formed structure of the type; malformed
/// structures are skipped.
extension AdvertisingData {
    /// The Flags. The field "may be zero or more octets long" (CSS A.1.3): no octets means
    /// no flag set, and octets after the first are ignored.
    public var flags: AdvertisingFlags? {
        data(for: .flags).map { AdvertisingFlags(rawValue: $0.first ?? 0) }
    }

    /// Every service UUID listed, complete or incomplete lists, 16-, 32- and 128-bit, in order.
    public var serviceUUIDs: [BluetoothUUID] {
        fields.flatMap { field -> [BluetoothUUID] in
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
        fields.contains { field in
            switch field {
            case let .serviceUUIDs16(_, complete), let .serviceUUIDs32(_, complete), let .serviceUUIDs128(_, complete):
                return complete
            default: return false
            }
        }
    }

    /// Every service solicitation UUID, of every width, in order.
    public var solicitedServiceUUIDs: [BluetoothUUID] {
        fields.flatMap { field -> [BluetoothUUID] in
            switch field {
            case let .serviceSolicitationUUIDs16(uuids): return uuids.map { BluetoothUUID($0) }
            case let .serviceSolicitationUUIDs32(uuids): return uuids.map { BluetoothUUID($0) }
            case let .serviceSolicitationUUIDs128(uuids): return uuids
            default: return []
            }
        }
    }

    public var completeLocalName: String? {
        fields.lazy.compactMap { if case let .completeLocalName(name) = $0 { return name } else { return nil } }.first
    }

    public var shortenedLocalName: String? {
        fields.lazy.compactMap { if case let .shortenedLocalName(name) = $0 { return name } else { return nil } }.first
    }

    /// The complete local name, else the shortened one.
    public var localName: String? { completeLocalName ?? shortenedLocalName }

    /// TX Power Level in dBm.
    public var txPowerLevel: Int8? {
        fields.lazy.compactMap { if case let .txPowerLevel(value) = $0 { return value } else { return nil } }.first
    }

    /// The Peripheral Connection Interval Range, units of 1.25 ms (0xFFFF = no preference).
    public var peripheralConnectionIntervalRange: (min: UInt16, max: UInt16)? {
        for case let .peripheralConnectionIntervalRange(min, max) in fields { return (min, max) }
        return nil
    }

    /// All service data, of every UUID width, in order.
    public var serviceData: [ServiceData] {
        fields.compactMap { field -> ServiceData? in
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
        fields.flatMap { field -> [BluetoothAddress] in
            if case let .publicTargetAddresses(addresses) = field { return addresses } else { return [] }
        }
    }

    public var randomTargetAddresses: [BluetoothAddress] {
        fields.flatMap { field -> [BluetoothAddress] in
            if case let .randomTargetAddresses(addresses) = field { return addresses } else { return [] }
        }
    }

    /// The Appearance value (Assigned Numbers 2.6).
    public var appearance: UInt16? {
        fields.lazy.compactMap { if case let .appearance(value) = $0 { return value } else { return nil } }.first
    }

    /// The advertising interval in units of 0.625 ms, from either the 0x1A or the long 0x2F form.
    public var advertisingInterval: UInt32? {
        fields.lazy.compactMap { field -> UInt32? in
            switch field {
            case let .advertisingInterval(value): return UInt32(value)
            case let .advertisingIntervalLong(value): return value
            default: return nil
            }
        }.first
    }

    public var leBluetoothDeviceAddress: DeviceAddress? {
        fields.lazy.compactMap { if case let .leBluetoothDeviceAddress(value) = $0 { return value } else { return nil } }.first
    }

    public var leRole: LERole? {
        fields.lazy.compactMap { if case let .leRole(value) = $0 { return value } else { return nil } }.first
    }

    /// The URI, with its scheme spelled out.
    public var uri: String? {
        fields.lazy.compactMap { if case let .uri(value) = $0 { return value } else { return nil } }.first
    }

    /// The first Manufacturer Specific Data.
    public var manufacturerData: ManufacturerData? { allManufacturerData.first }

    /// Every Manufacturer Specific Data structure, in order.
    public var allManufacturerData: [ManufacturerData] {
        fields.compactMap { field -> ManufacturerData? in
            if case let .manufacturerSpecificData(companyID, data) = field {
                return ManufacturerData(companyID: companyID, data: data)
            }
            return nil
        }
    }
}
