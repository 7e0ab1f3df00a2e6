import BluetoothCore
import BluetoothHost
import DBus

/// Our advertising data as BlueZ's `org.bluez.LEAdvertisement1` (doc/advertising-api.txt),
/// registered with `LEAdvertisingManager1.RegisterAdvertisement`. BlueZ lays the packets
/// out itself: it adds the flags, and puts in the scan response what does not fit (the
/// fields of our scan response are given to it with the rest).
enum BlueZLEAdvertisement {
    static let path = DBusObjectPath(uncheckedPath: "/org/bluejay/advertisement0")

    /// The properties for `data` and `scanResponse`, or `unsupported` naming a field BlueZ's
    /// D-Bus API cannot carry.
    static func properties(_ data: AdvertisingData, scanResponse: AdvertisingData?,
                           parameters: AdvertisingParameters) throws -> [String: DBusValue] {
        var serviceUUIDs: [String] = []
        var solicitUUIDs: [String] = []
        var manufacturerData: [UInt16: DBusValue] = [:]
        var serviceData: [String: DBusValue] = [:]
        var properties: [String: DBusValue] = [
            "Type": .string(parameters.isConnectable ? "peripheral" : "broadcast"),
        ]
        var includes: [String] = []
        for field in data.fields + (scanResponse?.fields ?? []) {
            switch field {
            case .flags:
                // BlueZ writes the flags itself: General Discoverable with Discoverable true,
                // which it takes only from a connectable ("peripheral") advertisement; a
                // broadcast one gets BlueZ's own flags.
                if parameters.isConnectable { properties["Discoverable"] = .boolean(true) }
            case let .serviceUUIDs16(uuids, _): serviceUUIDs += uuids.map { BluetoothUUID($0).uuidString.lowercased() }
            case let .serviceUUIDs32(uuids, _): serviceUUIDs += uuids.map { BluetoothUUID($0).uuidString.lowercased() }
            case let .serviceUUIDs128(uuids, _): serviceUUIDs += uuids.map { $0.uuidString.lowercased() }
            case let .serviceSolicitationUUIDs16(uuids): solicitUUIDs += uuids.map { BluetoothUUID($0).uuidString.lowercased() }
            case let .serviceSolicitationUUIDs32(uuids): solicitUUIDs += uuids.map { BluetoothUUID($0).uuidString.lowercased() }
            case let .serviceSolicitationUUIDs128(uuids): solicitUUIDs += uuids.map { $0.uuidString.lowercased() }
            case let .completeLocalName(name), let .shortenedLocalName(name): properties["LocalName"] = .string(name)
            case .txPowerLevel: includes.append("tx-power")
            case let .appearance(value): properties["Appearance"] = .uint16(value)
            case let .manufacturerSpecificData(companyID, bytes): manufacturerData[companyID] = .bytes(bytes)
            case let .serviceData16(uuid, bytes): serviceData[BluetoothUUID(uuid).uuidString.lowercased()] = .bytes(bytes)
            case let .serviceData32(uuid, bytes): serviceData[BluetoothUUID(uuid).uuidString.lowercased()] = .bytes(bytes)
            case let .serviceData128(uuid, bytes): serviceData[uuid.uuidString.lowercased()] = .bytes(bytes)
            default:
                throw HostError.unsupported("advertising \(field) over BlueZ: LEAdvertisement1 has no property for it "
                    + "(it carries flags, service UUIDs, solicitations, local name, TX power, appearance, manufacturer and service data)")
            }
        }
        if !serviceUUIDs.isEmpty { properties["ServiceUUIDs"] = .array(of: .string, serviceUUIDs.map { .string($0) }) }
        if !solicitUUIDs.isEmpty { properties["SolicitUUIDs"] = .array(of: .string, solicitUUIDs.map { .string($0) }) }
        if !manufacturerData.isEmpty { properties["ManufacturerData"] = DBusValue(manufacturerData) }
        if !serviceData.isEmpty { properties["ServiceData"] = DBusValue(serviceData) }
        if !includes.isEmpty { properties["Includes"] = .array(of: .string, includes.map { .string($0) }) }
        // Milliseconds (BlueZ 5.66: MinInterval and MaxInterval); ours are units of 0.625 ms.
        properties["MinInterval"] = .uint32(UInt32(parameters.intervalRange.lowerBound) * 5 / 8)
        properties["MaxInterval"] = .uint32(UInt32(parameters.intervalRange.upperBound) * 5 / 8)
        return properties
    }

    /// The exported object: its properties, and `Release`, which BlueZ calls when it drops the
    /// advertisement (bluetoothd stopping, the adapter powered off).
    static func interface(_ properties: [String: DBusValue], released: @escaping @Sendable () -> Void) -> DBusInterface {
        DBusInterface("org.bluez.LEAdvertisement1",
                      methods: [DBusMethod("Release") { _ in
                          released()
                          return []
                      }],
                      properties: properties.sorted { $0.key < $1.key }.map { DBusProperty.constant($0.key, $0.value) })
    }
}
