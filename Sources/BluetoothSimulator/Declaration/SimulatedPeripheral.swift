import BluetoothCore
import BluetoothHost
import BluetoothVirtual

/// A peripheral declared in code: its name, how it advertises, its services. Start it on a
/// virtual link with ``Simulator/add(_:)`` (or `SimulatedDevice/start(_:on:)`), or on any
/// controller with `SimulatedDevice/start(_:transport:)`.
///
/// By default it advertises, connectable, every ``advertisingInterval``: flags, its primary
/// service UUIDs and its name (in the scan response when the advertising data is full), and
/// again after each central leaves.
///
/// ```swift
/// let thermometer = SimulatedPeripheral(name: "Thermo", services: [
///     SimulatedService(uuid: "1809", characteristics: [
///         SimulatedCharacteristic(uuid: "2A1C", properties: [.read, .indicate], value: [0x00, 0x6F, 0x0E, 0x00, 0xFE]),
///     ]),
/// ])
/// ```
public struct SimulatedPeripheral: Sendable {
    /// The local name it advertises and its GAP Device Name.
    public var name: String
    /// Its public address; `nil` derives one from the name (`C0:5E:…`).
    public var address: BluetoothAddress?
    /// Time between advertising events, 20 ms to 10.24 s.
    public var advertisingInterval: Duration
    /// The service UUIDs it advertises; `nil` advertises its primary services (as many as fit).
    public var advertisedServiceUUIDs: [BluetoothUUID]?
    /// More advertising fields: manufacturer data, service data, TX power, appearance…
    public var additionalAdvertisingFields: [ADField]
    /// Advertising data to send as is, instead of the fields above.
    public var advertisingData: AdvertisingData?
    /// With ``advertisingData``: the scan response to send.
    public var scanResponse: AdvertisingData?
    /// With ``advertisingData``: advertise with an extended advertising set, so that the data
    /// may exceed 31 octets (up to 1650; Core 6.0, Vol 4, Part E, 7.8.54). A connectable set
    /// has no scan response (extended advertising is connectable or scannable, 7.8.53), and
    /// it does not advertise again after a disconnection.
    public var usesExtendedAdvertising = false
    /// Whether centrals may connect.
    public var isConnectable: Bool
    /// Advertise again when a central disconnects.
    public var advertisesAgainAfterDisconnection: Bool
    /// Start advertising as soon as it is placed.
    public var advertisesAtStart: Bool
    /// Its services, published in this order after the GAP and GATT services.
    public var services: [SimulatedService]
    /// Where it is on a virtual link, in metres (the central's controller is at the origin).
    public var position: VirtualPosition
    /// The ATT MTU its server accepts.
    public var preferredATTMTU: UInt16
    /// Limits and timeouts of its GATT server (e.g. `GATTServerSettings/handlerTimeout`,
    /// after which a handler still busy is answered with Unlikely Error).
    public var serverSettings: GATTServerSettings

    /// A connectable peripheral that advertises every `advertisingInterval`.
    public init(name: String, address: BluetoothAddress? = nil, advertisingInterval: Duration = .milliseconds(100),
                advertisedServiceUUIDs: [BluetoothUUID]? = nil, additionalAdvertisingFields: [ADField] = [],
                isConnectable: Bool = true, services: [SimulatedService] = [], position: VirtualPosition = VirtualPosition(x: 1, y: 0)) {
        self.name = name
        self.address = address
        self.advertisingInterval = advertisingInterval
        self.advertisedServiceUUIDs = advertisedServiceUUIDs
        self.additionalAdvertisingFields = additionalAdvertisingFields
        self.isConnectable = isConnectable
        advertisesAgainAfterDisconnection = true
        advertisesAtStart = true
        self.services = services
        self.position = position
        preferredATTMTU = 517
        serverSettings = GATTServerSettings()
    }

    /// The characteristic declared with this UUID (in the given service, or any).
    public func characteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> SimulatedCharacteristic? {
        for declared in services where service == nil || declared.uuid == service {
            if let found = declared.characteristics.first(where: { $0.uuid == uuid }) { return found }
        }
        return nil
    }

    /// The advertising interval in units of 0.625 ms, within what LE Set Advertising
    /// Parameters accepts.
    var advertisingIntervalUnits: UInt16 {
        let units = (advertisingInterval / .microseconds(625)).rounded()
        let limits = AdvertisingParameters.intervalLimits
        return UInt16(max(Double(limits.lowerBound), min(Double(limits.upperBound), units)))
    }

    /// `C0:5E` then four bytes of the name's FNV-1a hash.
    static func address(forName name: String) -> BluetoothAddress {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        let bytes: [UInt8] = [0xC0, 0x5E, UInt8(hash >> 24), UInt8((hash >> 16) & 0xFF), UInt8((hash >> 8) & 0xFF), UInt8(hash & 0xFF)]
        return BluetoothAddress(bytes: bytes) ?? .zero
    }
}
