import BluetoothCore

/// LE Connection Update Complete (Core 6.0, Vol 4, Part E, 7.7.65.3): the connection
/// parameters changed (or a requested change failed).
public struct LEConnectionUpdateCompleteEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x03
    public static let name = "LE Connection Update Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    /// In units of 1.25 ms.
    public var connectionInterval: UInt16 = 0
    public var peripheralLatency: UInt16 = 0
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint16(&connectionInterval)
        try coder.uint16(&peripheralLatency)
        try coder.uint16(&supervisionTimeout)
        try coder.end()
    }

    public var description: String {
        "LE Connection Update Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) interval=\(connectionInterval) latency=\(peripheralLatency) timeout=\(supervisionTimeout)"
    }
}

/// LE Read Remote Features Complete (Core 6.0, Vol 4, Part E, 7.7.65.4): page 0 of the peer's
/// LE features.
public struct LEReadRemoteFeaturesCompleteEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x04
    public static let name = "LE Read Remote Features Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var features: LEFeatures = []

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, features: LEFeatures) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.features = features
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint64(&features, field: "LE_Features")
        try coder.end()
    }

    public var description: String { "LE Read Remote Features Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) \(features)" }
}

/// LE Remote Connection Parameter Request (Core 6.0, Vol 4, Part E, 7.7.65.6): the peer asks
/// for new connection parameters; the host answers with LE Remote Connection Parameter Request
/// (Negative) Reply.
public struct LERemoteConnectionParameterRequestEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x06
    public static let name = "LE Remote Connection Parameter Request"

    public var connectionHandle: UInt16 = 0
    /// In units of 1.25 ms.
    public var intervalMin: UInt16 = 0
    /// In units of 1.25 ms.
    public var intervalMax: UInt16 = 0
    public var maxLatency: UInt16 = 0
    /// In units of 10 ms.
    public var timeout: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16, intervalMin: UInt16, intervalMax: UInt16, maxLatency: UInt16, timeout: UInt16) {
        self.connectionHandle = connectionHandle
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.maxLatency = maxLatency
        self.timeout = timeout
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint16(&intervalMin)
        try coder.uint16(&intervalMax)
        try coder.uint16(&maxLatency)
        try coder.uint16(&timeout)
        try coder.end()
    }

    public var description: String {
        "LE Remote Connection Parameter Request handle=\(Hex.format(connectionHandle, digits: 4)) interval=\(intervalMin)...\(intervalMax) latency=\(maxLatency) timeout=\(timeout)"
    }
}

/// LE Data Length Change (Core 6.0, Vol 4, Part E, 7.7.65.7): the largest LL payloads in
/// each direction changed.
public struct LEDataLengthChangeEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x07
    public static let name = "LE Data Length Change"

    public var connectionHandle: UInt16 = 0
    public var maxTxOctets: UInt16 = 0
    /// Microseconds.
    public var maxTxTime: UInt16 = 0
    public var maxRxOctets: UInt16 = 0
    /// Microseconds.
    public var maxRxTime: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.connectionHandle = connectionHandle
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint16(&maxTxOctets)
        try coder.uint16(&maxTxTime)
        try coder.uint16(&maxRxOctets)
        try coder.uint16(&maxRxTime)
        try coder.end()
    }

    public var description: String {
        "LE Data Length Change handle=\(Hex.format(connectionHandle, digits: 4)) tx=\(maxTxOctets)/\(maxTxTime)us rx=\(maxRxOctets)/\(maxRxTime)us"
    }
}

/// LE PHY Update Complete (Core 6.0, Vol 4, Part E, 7.7.65.12): the PHYs of a connection
/// changed, or LE Set PHY finished without a change.
public struct LEPHYUpdateCompleteEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x0C
    public static let name = "LE PHY Update Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var txPHY: LEPhy = .le1M
    public var rxPHY: LEPhy = .le1M

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, txPHY: LEPhy, rxPHY: LEPhy) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.txPHY = txPHY
        self.rxPHY = rxPHY
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&txPHY, field: "TX_PHY")
        try coder.uint8(&rxPHY, field: "RX_PHY")
        try coder.end()
    }

    public var description: String { "LE PHY Update Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) tx=\(txPHY) rx=\(rxPHY)" }
}

/// LE Channel Selection Algorithm (Core 6.0, Vol 4, Part E, 7.7.65.20): which channel
/// selection algorithm a new connection uses.
public struct LEChannelSelectionAlgorithmEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x14
    public static let name = "LE Channel Selection Algorithm"

    public var connectionHandle: UInt16 = 0
    public var channelSelectionAlgorithm: ChannelSelectionAlgorithm = .algorithm1

    public init() {}

    public init(connectionHandle: UInt16, channelSelectionAlgorithm: ChannelSelectionAlgorithm) {
        self.connectionHandle = connectionHandle
        self.channelSelectionAlgorithm = channelSelectionAlgorithm
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&channelSelectionAlgorithm, field: "Channel_Selection_Algorithm")
        try coder.end()
    }

    public var description: String { "LE Channel Selection Algorithm handle=\(Hex.format(connectionHandle, digits: 4)) \(channelSelectionAlgorithm)" }
}
