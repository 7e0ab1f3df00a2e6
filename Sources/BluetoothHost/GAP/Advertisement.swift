import BluetoothCore
import BluetoothHCI

/// One discovery made while scanning: what a peer advertises, with its scan response merged
/// in when one was received.
public struct Advertisement: Sendable, CustomStringConvertible {
    /// The address the advertisement came from, over the air.
    public var peer: DeviceAddress
    /// The advertiser's identity address when ``peer`` is a resolvable private address that a
    /// bond's IRK resolves (or the controller resolved it); `nil` otherwise.
    public var identity: DeviceAddress?
    /// Signal strength in dBm, when the controller measured it.
    public var rssi: Int8?
    /// The advertiser accepts connections.
    public var isConnectable: Bool
    /// The advertiser answers scan requests.
    public var isScannable: Bool
    /// The advertisement was directed at this device.
    public var isDirected: Bool
    /// The data of the advertising PDU.
    public var advertisingData: AdvertisingData
    /// The data of the scan response, once one arrived.
    public var scanResponse: AdvertisingData?
    /// TX power reported by the controller (extended advertising), else the TX Power Level field.
    public var txPower: Int8?
    /// When the latest PDU of this peer was received.
    public var timestamp: ContinuousClock.Instant
    /// The controller said the data was cut and no more will come (an extended
    /// advertisement's chain broke off: Core 6.0, Vol 4, Part E, 7.7.65.13, data status
    /// "incomplete, truncated"): the data holds what arrived.
    public var isDataTruncated = false
    /// The host kept only part of the data: past ``AdvertisingData/extendedMaximumLength``,
    /// more than any controller assembles, the rest was dropped.
    public var isDataPartial = false
    /// The PHY the advertisement came on: LE 1M for legacy advertising, LE 1M or LE Coded
    /// for the primary channel of extended advertising; `nil` from a legacy report.
    public var primaryPHY: LEPhy?
    /// The PHY of the extended advertisement's data (AUX_ADV_IND); `nil` for legacy PDUs.
    public var secondaryPHY: LEPhy?
    /// The Advertising SID of an extended advertisement: which of the advertiser's sets.
    public var advertisingSID: UInt8?
    /// The advertisement used extended advertising PDUs (its data may exceed 31 octets).
    public var isExtended = false

    public init(peer: DeviceAddress, rssi: Int8?, isConnectable: Bool, isScannable: Bool = false, isDirected: Bool = false,
                advertisingData: AdvertisingData, scanResponse: AdvertisingData? = nil, txPower: Int8? = nil,
                timestamp: ContinuousClock.Instant = .now) {
        self.peer = peer
        self.rssi = rssi
        self.isConnectable = isConnectable
        self.isScannable = isScannable
        self.isDirected = isDirected
        self.advertisingData = advertisingData
        self.scanResponse = scanResponse
        self.txPower = txPower
        self.timestamp = timestamp
    }

    /// Advertising data and scan response together, advertising data first.
    public var data: AdvertisingData {
        scanResponse.map { advertisingData.merging(scanResponse: $0) } ?? advertisingData
    }

    // The accessors below read both parts as ``data`` would, advertising data first, without
    // building the merged copy (they run for every report a scan receives).

    /// The complete local name, else the shortened one, from either part.
    public var localName: String? {
        advertisingData.completeLocalName ?? scanResponse?.completeLocalName
            ?? advertisingData.shortenedLocalName ?? scanResponse?.shortenedLocalName
    }

    /// The service UUIDs of both parts, advertising data first.
    public var serviceUUIDs: [BluetoothUUID] {
        advertisingData.serviceUUIDs + (scanResponse?.serviceUUIDs ?? [])
    }

    /// The TX Power Level field of either part.
    public var txPowerLevel: Int8? { advertisingData.txPowerLevel ?? scanResponse?.txPowerLevel }
    /// The advertiser: its identity when known (a bonded peer that rotates its private address
    /// keeps one identifier), else the address it advertised from.
    public var identifier: PeripheralIdentifier { PeripheralIdentifier(address: identity ?? peer, name: localName) }

    public var description: String {
        "\(identifier) rssi=\(rssi.map { "\($0)" } ?? "?")\(isConnectable ? " connectable" : "") \(data)"
    }
}

/// How to scan.
public struct ScanOptions: Sendable, Equatable {
    /// Active scanning sends scan requests and receives scan responses; passive only listens.
    public var active = true
    /// Report each peer once (and again when its data changes) instead of every PDU.
    public var filterDuplicates = true
    /// Report only peers that advertise at least one of these services (empty: all).
    public var serviceUUIDs: [BluetoothUUID] = []
    /// Report only advertisements heard at least this strong (dBm); `nil` (the default): all.
    /// On BlueZ it is the discovery filter's `RSSI`.
    public var minimumRSSI: Int8?
    /// The primary PHYs to scan when the controller scans with the extended commands: LE 1M
    /// and/or LE Coded (long range). Legacy scanning is LE 1M only (Core 6.0, Vol 4, Part E,
    /// 7.8.64).
    public var phys: LEPhySet = [.le1M]
    /// Scan interval and window, in units of 0.625 ms (default 60 ms / 30 ms).
    public var interval: UInt16 = 0x0060
    public var window: UInt16 = 0x0030
    /// How many peers the host keeps state for while it scans (the latest advertisement, to
    /// merge a scan response into; what was last reported, to filter duplicates). Default
    /// 16,384: enough for 10,000 devices with random addresses. Past it the least recently
    /// heard peer is forgotten (and counted): if heard again it is reported as new. A peer
    /// or a crowd rotating random addresses must not make memory grow without bound.
    public var peerLimit = ScanOptions.defaultPeerLimit
    /// A peer not heard for this long is forgotten, as past ``peerLimit`` (default 60 s,
    /// well beyond the longest legacy advertising interval, 10.24 s: Core 6.0, Vol 4, Part E,
    /// 7.8.5).
    public var peerTimeout: Duration = .seconds(60)

    /// The default ``peerLimit``.
    public static let defaultPeerLimit = 16_384

    public init(active: Bool = true, filterDuplicates: Bool = true, serviceUUIDs: [BluetoothUUID] = []) {
        self.active = active
        self.filterDuplicates = filterDuplicates
        self.serviceUUIDs = serviceUUIDs
    }
}
