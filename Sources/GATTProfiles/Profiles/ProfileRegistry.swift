import BluetoothCore

/// A collection of service profiles to look services and characteristics up in: what to
/// call them, how to show their values. ``standard`` holds the profiles this module ships.
///
/// ```swift
/// var registry = ProfileRegistry.standard
/// registry.register(myService)
/// let text = registry.stringValue([87], characteristic: "2A19")   // ["Battery Level": "87"]
/// ```
public struct ProfileRegistry: Sendable {
    private var servicesByUUID: [BluetoothUUID: ServiceProfile] = [:]
    private var order: [BluetoothUUID] = []

    public init(services: [ServiceProfile] = []) {
        for service in services { register(service) }
    }

    /// Adds a service profile, replacing one with the same UUID.
    public mutating func register(_ service: ServiceProfile) {
        if servicesByUUID.updateValue(service, forKey: service.uuid) == nil { order.append(service.uuid) }
    }

    /// Every registered service, in registration order.
    public var services: [ServiceProfile] { order.compactMap { servicesByUUID[$0] } }

    public func service(_ uuid: BluetoothUUID) -> ServiceProfile? { servicesByUUID[uuid] }

    /// The characteristic profile for a UUID, in the given service or in any.
    public func characteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> CharacteristicProfile? {
        if let service { return servicesByUUID[service]?.characteristic(uuid) }
        for serviceUUID in order {
            if let found = servicesByUUID[serviceUUID]?.characteristic(uuid) { return found }
        }
        return nil
    }

    /// A value's text fields: through the characteristic's profile when there is one and it
    /// decodes the value, else one hexadecimal field named after the characteristic (or its UUID).
    public func stringValue(_ bytes: [UInt8], characteristic uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> [String: String] {
        if let profile = characteristic(uuid, inService: service), let fields = try? profile.stringValue(bytes) { return fields }
        let name = characteristic(uuid, inService: service)?.name ?? GATTNames.name(forCharacteristic: uuid) ?? uuid.description
        return [name: Hex.encode(bytes)]
    }

    /// The name of a service: this registry's, else the Bluetooth SIG's (``GATTNames``).
    public func name(forService uuid: BluetoothUUID) -> String? {
        service(uuid)?.name ?? GATTNames.name(forService: uuid)
    }

    /// The name of a characteristic: this registry's (in `service` if it has a profile for it,
    /// else in any), else the Bluetooth SIG's (``GATTNames``).
    public func name(forCharacteristic uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> String? {
        let profile = service.flatMap { characteristic(uuid, inService: $0) } ?? characteristic(uuid)
        return profile?.name ?? GATTNames.name(forCharacteristic: uuid)
    }

    /// The shipped profiles: Heart Rate, Battery, Device Information, Current Time and the
    /// TI SensorTag accelerometer.
    public static var standard: ProfileRegistry {
        ProfileRegistry(services: [
            HeartRateProfile.service, BatteryProfile.service, DeviceInformationProfile.service,
            CurrentTimeProfile.service, TISensorTag.AccelerometerService.profile,
        ])
    }
}
