import BluetoothCore
import BluetoothHost
import DBus

/// A device BlueZ heard, as our ``BluetoothHost/Advertisement``: BlueZ parses the advertising
/// data and scan response into Device1 properties, so the fields are put back together from
/// them, one AD structure per property (Core Supplement, Part A):
///
/// | Device1 | AD field |
/// | --- | --- |
/// | `AdvertisingFlags` | Flags |
/// | `Name` | Complete Local Name (BlueZ keeps the name however it learnt it) |
/// | `UUIDs` | Complete List of Service UUIDs (16, 32 or 128-bit as they fit) |
/// | `ManufacturerData` | Manufacturer Specific Data, one per company |
/// | `ServiceData` | Service Data, one per UUID |
/// | `TxPower` | TX Power Level |
/// | `Appearance` | Appearance |
/// | `AdvertisingData` | the other AD types, as they came |
///
/// What BlueZ does not give: which part (advertising data or scan response) a field came in
/// (all is in ``BluetoothHost/Advertisement/advertisingData``), whether the advertisement was
/// connectable (reported `true`: BlueZ lists only devices it may connect to or that advertise
/// to be found), the PHYs and the SID of an extended advertisement.
enum BlueZAdvertisement {
    static func advertisement(from device: [String: DBusValue], timestamp: ContinuousClock.Instant = .now) -> Advertisement? {
        guard let peer = BlueZObjectTree.address(of: device) else { return nil }
        var fields: [ADField] = []
        if let flags = device["AdvertisingFlags"]?.bytesValue, let first = flags.first {
            fields.append(.flags(AdvertisingFlags(rawValue: first)))
        }
        if let name = device["Name"]?.stringValue { fields.append(.completeLocalName(name)) }
        let uuids = (device["UUIDs"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(BluetoothUUID.init) }
        if !uuids.isEmpty { fields += ADField.serviceUUIDs(uuids, complete: true) }
        if let manufacturers = device["ManufacturerData"]?.dictionaryValue {
            for entry in manufacturers.entries {
                guard let company = entry.key.uint16Value, let data = entry.value.unwrapped.bytesValue else { continue }
                fields.append(.manufacturerSpecificData(companyID: company, data: data))
            }
        }
        if let services = device["ServiceData"]?.dictionaryValue {
            for entry in services.entries {
                guard let uuid = entry.key.stringValue.flatMap(BluetoothUUID.init), let data = entry.value.unwrapped.bytesValue else { continue }
                fields.append(ADField.serviceData(uuid: uuid, data: data))
            }
        }
        if let tx = device["TxPower"]?.int16Value { fields.append(.txPowerLevel(Int8(clamping: tx))) }
        if let appearance = device["Appearance"]?.uint16Value { fields.append(.appearance(appearance)) }
        var data = AdvertisingData(fields)
        if let raw = device["AdvertisingData"]?.dictionaryValue {
            for entry in raw.entries {
                guard let type = entry.key.byteValue, let bytes = entry.value.unwrapped.bytesValue else { continue }
                let structure = AdvertisingStructure(type: AdvertisingDataType(rawValue: type), data: bytes)
                if !data.structures.contains(structure) { data.structures.append(structure) }
            }
        }
        let rssi = device["RSSI"]?.int16Value.map { Int8(clamping: $0) }
        return Advertisement(peer: peer, rssi: rssi, isConnectable: true, advertisingData: data, timestamp: timestamp)
    }

    /// The Device1 properties whose change is a new advertisement heard (others, such as
    /// `Connected` or `Paired`, are not).
    static let advertisedProperties: Set<String> = [
        "RSSI", "ManufacturerData", "ServiceData", "AdvertisingData", "AdvertisingFlags", "TxPower", "Name", "UUIDs",
    ]
}
