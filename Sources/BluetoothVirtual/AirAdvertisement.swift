import BluetoothCore
import BluetoothHCI

/// What one advertising event puts on the air, from legacy advertising or from an advertising
/// set: the scanners and initiators in range act on it.
struct AirAdvertisement: Sendable {
    var address: DeviceAddress
    /// With ``AdvertisingEventProperties/legacy`` for legacy PDUs.
    var properties: AdvertisingEventProperties
    /// The target of directed advertising.
    var directAddress: DeviceAddress?
    var data: [UInt8]
    var scanResponse: [UInt8]
    /// The advertising set; `nil` for the legacy advertising commands.
    var setHandle: UInt8?
    var sid: UInt8?
    var primaryPHY: LEPhy = .le1M
    var secondaryPHY: LEPhy?
    /// In the extended header, when the set includes it.
    var txPower: Int8?

    var isLegacy: Bool { properties.contains(.legacy) }
    var isConnectable: Bool { properties.contains(.connectable) }
    var isScannable: Bool { properties.contains(.scannable) }
    var isDirected: Bool { properties.contains(.directed) }

    /// Legacy advertising (LE Set Advertising Parameters).
    init(legacy parameters: LESetAdvertisingParametersCommand, address: DeviceAddress, data: [UInt8], scanResponse: [UInt8]) {
        self.address = address
        switch parameters.advertisingType {
        case .advInd: properties = [.legacy, .connectable, .scannable]
        case .advDirectIndHigh: properties = [.legacy, .connectable, .directed, .highDutyCycleDirected]
        case .advDirectIndLow: properties = [.legacy, .connectable, .directed]
        case .advScanInd: properties = [.legacy, .scannable]
        case .advNonconnInd: properties = [.legacy]
        }
        directAddress = properties.contains(.directed) ? DeviceAddress(parameters.peerAddress, type: parameters.peerAddressType) : nil
        self.data = properties.contains(.directed) ? [] : data
        self.scanResponse = scanResponse
    }

    /// An advertising set (LE Set Extended Advertising Parameters).
    init(set: AdvertisingSetState, address: DeviceAddress, txPower: Int8) {
        let parameters = set.parameters
        self.address = address
        properties = parameters.properties
        directAddress = parameters.properties.contains(.directed)
            ? DeviceAddress(parameters.peerAddress, type: parameters.peerAddressType) : nil
        data = parameters.properties.contains(.legacy) && parameters.properties.contains(.directed) ? [] : set.data
        scanResponse = set.scanResponseData
        setHandle = parameters.advertisingHandle
        let isLegacy = parameters.properties.contains(.legacy)
        sid = isLegacy ? nil : parameters.advertisingSID
        primaryPHY = isLegacy ? .le1M : parameters.primaryPHY
        secondaryPHY = isLegacy ? nil : parameters.secondaryPHY
        self.txPower = parameters.properties.contains(.includeTxPower) ? txPower : nil
    }

    /// The most data one LE Extended Advertising Report carries: the event's 255 octets less
    /// the subevent code, the report count and the report's 24 fixed octets (Core 6.0, Vol 4,
    /// Part E, 7.7.65.13). Longer data goes to the host in several reports.
    static let reportDataLimit = 229

    /// The Event_Type of an extended report of this advertisement (7.7.65.13).
    func reportEventType(isScanResponse: Bool) -> ExtendedAdvertisingEventType {
        var type: ExtendedAdvertisingEventType = []
        if isLegacy { type.insert(.legacy) }
        if isConnectable { type.insert(.connectable) }
        if isScannable { type.insert(.scannable) }
        if isDirected { type.insert(.directed) }
        if isScanResponse { type.insert(.scanResponse) }
        return type
    }

    /// The legacy report type of a legacy PDU (7.7.65.2).
    func legacyReportType(isScanResponse: Bool) -> AdvertisingReportEventType {
        if isScanResponse { return .scanRsp }
        if isDirected { return .advDirectInd }
        if isConnectable { return .advInd }
        return isScannable ? .advScanInd : .advNonconnInd
    }
}

/// One extended advertising set in a virtual controller (Core 6.0, Vol 4, Part E,
/// 7.8.52-7.8.60).
struct AdvertisingSetState: Sendable {
    var parameters: LESetExtendedAdvertisingParametersCommand
    var data: [UInt8] = []
    var scanResponseData: [UInt8] = []
    /// Fragments received so far (first, intermediate), joined when the last one arrives.
    var pendingData: [UInt8]?
    var pendingScanResponse: [UInt8]?
    /// LE Set Advertising Set Random Address.
    var randomAddress: BluetoothAddress?
    var isEnabled = false
    /// The advertiser address, fixed when the set was enabled.
    var address: DeviceAddress?
    /// When the set must stop (Duration), if it has one.
    var deadline: Duration?
    /// Max_Extended_Advertising_Events, 0 for none.
    var maximumEvents = 0
    var completedEvents = 0
    var timer: TimerID?
}
