import BluetoothCore

/// LE Set Advertising Parameters (Core 6.0, Vol 4, Part E, 7.8.5): legacy advertising.
public struct LESetAdvertisingParametersCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0006)
    public static let name = "LE Set Advertising Parameters"

    /// In units of 0.625 ms, 0x0020...0x4000.
    public var intervalMin: UInt16 = 0
    /// In units of 0.625 ms, 0x0020...0x4000.
    public var intervalMax: UInt16 = 0
    public var advertisingType: AdvertisingType = .advInd
    public var ownAddressType: OwnAddressType = .public
    /// Public or random: the target of directed advertising (or the identity to look up in the
    /// resolving list). The field has no identity types; they are written as their base type.
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    public var channelMap: AdvertisingChannelMap = []
    public var filterPolicy: AdvertisingFilterPolicy = .acceptAll

    public init() {}

    public init(intervalMin: UInt16, intervalMax: UInt16, advertisingType: AdvertisingType = .advInd,
                ownAddressType: OwnAddressType = .public, peerAddressType: AddressType = .public,
                peerAddress: BluetoothAddress = .zero, channelMap: AdvertisingChannelMap = .all,
                filterPolicy: AdvertisingFilterPolicy = .acceptAll) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&intervalMin)
        try coder.uint16(&intervalMax)
        try coder.uint8(&advertisingType, field: "Advertising_Type")
        try coder.uint8(&ownAddressType, field: "Own_Address_Type")
        try coder.publicOrRandomAddressType(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        try coder.uint8(&channelMap, field: "Advertising_Channel_Map")
        try coder.uint8(&filterPolicy, field: "Advertising_Filter_Policy")
    }
}

/// LE Read Advertising Physical Channel Tx Power (Core 6.0, Vol 4, Part E, 7.8.6).
public struct LEReadAdvertisingPhysicalChannelTxPowerCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0007)
    public static let name = "LE Read Advertising Physical Channel Tx Power"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// dBm, -127...20.
        public var txPowerLevel: Int8 = 0

        public init() {}

        public init(txPowerLevel: Int8) { self.txPowerLevel = txPowerLevel }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.int8(&txPowerLevel)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// The parameters of LE Set Advertising Data and LE Set Scan Response Data: a length octet,
/// then 31 octets of which the first `length` are significant (Core 6.0, Vol 4, Part E, 7.8.7).
enum LegacyAdvertisingDataField {
    static let capacity = 31
}

extension FieldCoder {
    /// The length, then the data zero-padded to 31 octets (a writer writes the first 31).
    mutating func legacyAdvertisingData(_ data: inout [UInt8], field: String) throws(PacketDecodingError) {
        let capacity = LegacyAdvertisingDataField.capacity
        var length = UInt8(min(data.count, capacity))
        try uint8(&length)
        try check(Int(length) <= capacity, field: field, value: length)
        try bytes(&data, count: capacity)
        if isReading { data = Array(data.prefix(Int(length))) }
    }
}

/// LE Set Advertising Data (Core 6.0, Vol 4, Part E, 7.8.7). The parameter is always 32
/// octets: the length, then the data zero-padded to 31 octets.
public struct LESetAdvertisingDataCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0008)
    public static let name = "LE Set Advertising Data"
    /// The most advertising data a legacy advertisement carries.
    public static let maximumDataLength = LegacyAdvertisingDataField.capacity

    /// At most ``maximumDataLength`` octets; the encoder writes only the first 31.
    public var data: [UInt8] = []

    public init() {}

    public init(data: [UInt8]) { self.data = data }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.legacyAdvertisingData(&data, field: "Advertising_Data_Length")
    }
}

/// LE Set Scan Response Data (Core 6.0, Vol 4, Part E, 7.8.8). The parameter is always 32
/// octets: the length, then the data zero-padded to 31 octets.
public struct LESetScanResponseDataCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0009)
    public static let name = "LE Set Scan Response Data"
    /// The most scan response data a legacy advertisement carries.
    public static let maximumDataLength = LegacyAdvertisingDataField.capacity

    /// At most ``maximumDataLength`` octets; the encoder writes only the first 31.
    public var data: [UInt8] = []

    public init() {}

    public init(data: [UInt8]) { self.data = data }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.legacyAdvertisingData(&data, field: "Scan_Response_Data_Length")
    }
}

/// LE Set Advertising Enable (Core 6.0, Vol 4, Part E, 7.8.9): starts or stops legacy
/// advertising.
public struct LESetAdvertisingEnableCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000A)
    public static let name = "LE Set Advertising Enable"

    public var enable: Bool = false

    public init() {}

    public init(enable: Bool) { self.enable = enable }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bool(&enable, field: "Advertising_Enable")
    }
}
