import BluetoothCore

/// One typed advertising data field (Core Specification Supplement, Part A, 1): what
/// ``AdvertisingData`` is built from, and how its structures read when typed.
///
/// UUIDs in 16- and 32-bit lists are stored as the numbers themselves, so a list can only
/// hold UUIDs of its width; ``serviceUUIDs(_:complete:)`` sorts mixed UUIDs into lists.
public enum ADField: Hashable, Sendable, CustomStringConvertible {
    /// 0x01 (CSS A.1.3).
    case flags(AdvertisingFlags)
    /// 0x02 / 0x03 (CSS A.1.1).
    case serviceUUIDs16([UInt16], complete: Bool)
    /// 0x04 / 0x05 (CSS A.1.1).
    case serviceUUIDs32([UInt32], complete: Bool)
    /// 0x06 / 0x07 (CSS A.1.1).
    case serviceUUIDs128([BluetoothUUID], complete: Bool)
    /// 0x08 (CSS A.1.2): a prefix of the complete name.
    case shortenedLocalName(String)
    /// 0x09 (CSS A.1.2).
    case completeLocalName(String)
    /// 0x0A (CSS A.1.5): transmitted power in dBm.
    case txPowerLevel(Int8)
    /// 0x12 (CSS A.1.9): preferred connection interval, units of 1.25 ms; 0xFFFF = no preference.
    case peripheralConnectionIntervalRange(min: UInt16, max: UInt16)
    /// 0x14 (CSS A.1.10).
    case serviceSolicitationUUIDs16([UInt16])
    /// 0x1F (CSS A.1.10).
    case serviceSolicitationUUIDs32([UInt32])
    /// 0x15 (CSS A.1.10).
    case serviceSolicitationUUIDs128([BluetoothUUID])
    /// 0x16 (CSS A.1.11).
    case serviceData16(uuid: UInt16, data: [UInt8])
    /// 0x20 (CSS A.1.11).
    case serviceData32(uuid: UInt32, data: [UInt8])
    /// 0x21 (CSS A.1.11).
    case serviceData128(uuid: BluetoothUUID, data: [UInt8])
    /// 0x17 (CSS A.1.13): one or more public addresses of intended recipients.
    case publicTargetAddresses([BluetoothAddress])
    /// 0x18 (CSS A.1.14): one or more random addresses of intended recipients.
    case randomTargetAddresses([BluetoothAddress])
    /// 0x19 (CSS A.1.12): the Appearance value (Assigned Numbers 2.6).
    case appearance(UInt16)
    /// 0x1A (CSS A.1.15): the advertising interval, units of 0.625 ms.
    case advertisingInterval(UInt16)
    /// 0x2F (CSS A.1.15): the advertising interval, units of 0.625 ms, in 3 or 4 octets.
    case advertisingIntervalLong(UInt32)
    /// 0x1B (CSS A.1.16): the device's own LE address and its type.
    case leBluetoothDeviceAddress(DeviceAddress)
    /// 0x1C (CSS A.1.17).
    case leRole(AdvertisingData.LERole)
    /// 0x24 (CSS A.1.18): a URI; the scheme travels as a code point (Assigned Numbers 2.7).
    case uri(String)
    /// 0xFF (CSS A.1.4).
    case manufacturerSpecificData(companyID: UInt16, data: [UInt8])
    /// Any other structure, or a known one whose data is malformed.
    case other(type: AdvertisingDataType, data: [UInt8])

    /// Lists for `uuids`, each in its narrowest width (16, 32 or 128 bits), in that order.
    public static func serviceUUIDs(_ uuids: [BluetoothUUID], complete: Bool) -> [ADField] {
        let short = uuids.compactMap(\.uint16)
        let medium = uuids.filter { $0.uint16 == nil }.compactMap(\.uint32)
        let long = uuids.filter { $0.uint32 == nil }
        var fields: [ADField] = []
        if !short.isEmpty { fields.append(.serviceUUIDs16(short, complete: complete)) }
        if !medium.isEmpty { fields.append(.serviceUUIDs32(medium, complete: complete)) }
        if !long.isEmpty { fields.append(.serviceUUIDs128(long, complete: complete)) }
        return fields
    }

    /// Service data for `uuid` in its narrowest form.
    public static func serviceData(uuid: BluetoothUUID, data: [UInt8]) -> ADField {
        if let short = uuid.uint16 { return .serviceData16(uuid: short, data: data) }
        if let medium = uuid.uint32 { return .serviceData32(uuid: medium, data: data) }
        return .serviceData128(uuid: uuid, data: data)
    }

    public var type: AdvertisingDataType { structure.type }

    public var description: String {
        switch self {
        case let .other(type, data): return "\(type.name): \(Hex.encode(data, separator: " "))"
        default: return "\(type.name): \(valueDescription)"
        }
    }
}
