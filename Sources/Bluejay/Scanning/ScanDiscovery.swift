import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Foundation

/// One peripheral found by a scan: who it is, what it advertises and how strong its signal is.
public struct ScanDiscovery: Sendable, CustomStringConvertible {
    /// The peripheral, to pass to ``Bluejay/connect(_:timeout:warningOptions:completion:)``.
    public var peripheralIdentifier: PeripheralIdentifier
    /// Everything the host assembled: advertising data, scan response, connectable, TX power.
    public var advertisement: Advertisement
    /// Signal strength in dBm (127 when the controller did not measure it).
    public var rssi: Int

    public init(advertisement: Advertisement) {
        self.advertisement = advertisement
        self.peripheralIdentifier = advertisement.identifier
        self.rssi = advertisement.rssi.map(Int.init) ?? 127
    }

    /// The advertising packet's fields, scan response included (Bluejay's `advertisementPacket`).
    public var advertisementPacket: AdvertisingData { advertisement.data }
    /// The complete or shortened local name.
    public var localName: String? { advertisement.localName }
    /// The services the peripheral lists.
    public var serviceIdentifiers: [ServiceIdentifier] { advertisement.serviceUUIDs.map { ServiceIdentifier(uuid: $0) } }
    /// Manufacturer Specific Data as CoreBluetooth gives it: the company identifier
    /// (little-endian) followed by the data.
    public var manufacturerData: Data? {
        advertisement.data.manufacturerData.map { entry in
            var writer = ByteWriter(capacity: 2 + entry.data.count)
            writer.write(entry.companyID)
            writer.write(contentsOf: entry.data)
            return Data(writer.bytes)
        }
    }
    /// Service Data, by service.
    public var serviceData: [ServiceIdentifier: Data] {
        var result: [ServiceIdentifier: Data] = [:]
        for entry in advertisement.data.serviceData where result[ServiceIdentifier(uuid: entry.uuid)] == nil {
            result[ServiceIdentifier(uuid: entry.uuid)] = Data(entry.data)
        }
        return result
    }
    /// The TX power the peripheral advertises, in dBm.
    public var txPowerLevel: Int? { advertisement.txPower.map(Int.init) }
    /// Whether the peripheral accepts connections.
    public var isConnectable: Bool { advertisement.isConnectable }
    /// The peripheral advertised with extended advertising PDUs (data beyond 31 octets).
    public var isExtended: Bool { advertisement.isExtended }
    /// The controller said the advertising data was cut short: the packet holds what arrived.
    public var isDataTruncated: Bool { advertisement.isDataTruncated }
    /// The host kept only part of the data (past the longest any advertiser may send).
    public var isDataPartial: Bool { advertisement.isDataPartial }
    /// The PHY of the advertising channel PDU (LE 1M or LE Coded), when the controller said.
    public var primaryPHY: LEPhy? { advertisement.primaryPHY }
    /// The PHY that carried an extended advertisement's data.
    public var secondaryPHY: LEPhy? { advertisement.secondaryPHY }

    public var description: String {
        "\(peripheralIdentifier) rssi \(rssi)\(localName.map { " \"\($0)\"" } ?? "")"
    }
}

/// What a scan does after a discovery (or an expiry) was reported.
public enum ScanAction: Sendable {
    /// Keep scanning.
    case `continue`
    /// Ignore this peripheral for the rest of this scan.
    case blacklist
    /// Stop scanning; `stopped` is called with no error.
    case stop
    /// Stop scanning, then connect to the discovery before anything else queued runs.
    case connect(ScanDiscovery, Timeout, WarningOptions, @Sendable (ConnectionResult) -> Void)
}

/// What the `async` scan reports.
public enum ScanEvent: Sendable {
    /// A peripheral was found, or (with duplicates allowed) heard again with a changed signal.
    case discovered(ScanDiscovery)
    /// A peripheral seems gone: not heard for longer than its advertising suggests.
    case expired(ScanDiscovery)

    /// The discovery either way.
    public var discovery: ScanDiscovery {
        switch self {
        case let .discovered(discovery), let .expired(discovery): return discovery
        }
    }
}

extension ScanAction {
    /// Stop scanning, then connect to the discovery before anything else queued runs, with no
    /// time limit on the connection (Bluejay's default) and the default warning options: the
    /// two-argument form of Bluejay's README. The four-argument case sets both.
    public static func connect(_ discovery: ScanDiscovery, _ completion: @escaping @Sendable (ConnectionResult) -> Void) -> ScanAction {
        .connect(discovery, .none, WarningOptions(), completion)
    }
}
