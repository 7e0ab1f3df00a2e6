import BluetoothCore

/// LE Set Advertising Parameters (Core 6.0, Vol 4, Part E, 7.8.5): legacy advertising.
public struct LESetAdvertisingParametersCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0006)
    public static let name = "LE Set Advertising Parameters"

    /// In units of 0.625 ms, 0x0020...0x4000.
    public var intervalMin: UInt16
    /// In units of 0.625 ms, 0x0020...0x4000.
    public var intervalMax: UInt16
    public var advertisingType: AdvertisingType
    public var ownAddressType: OwnAddressType
    /// Public or random: the target of directed advertising (or the identity to look up in the
    /// resolving list). The field has no identity types; they are written as their base type.
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var channelMap: AdvertisingChannelMap
    public var filterPolicy: AdvertisingFilterPolicy

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

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        intervalMin = try reader.readUInt16()
        intervalMax = try reader.readUInt16()
        advertisingType = try reader.readEnum(field: "Advertising_Type")
        ownAddressType = try reader.readEnum(field: "Own_Address_Type")
        peerAddressType = try reader.readPublicOrRandomAddressType(field: "Peer_Address_Type")
        peerAddress = try reader.readAddress()
        channelMap = AdvertisingChannelMap(rawValue: try reader.readUInt8())
        filterPolicy = try reader.readEnum(field: "Advertising_Filter_Policy")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(intervalMin)
        writer.write(intervalMax)
        writer.write(advertisingType.rawValue)
        writer.write(ownAddressType.rawValue)
        writer.write(peerAddressType.base.rawValue)
        writer.write(peerAddress)
        writer.write(channelMap.rawValue)
        writer.write(filterPolicy.rawValue)
    }
}

/// LE Read Advertising Physical Channel Tx Power (Core 6.0, Vol 4, Part E, 7.8.6).
public struct LEReadAdvertisingPhysicalChannelTxPowerCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0007)
    public static let name = "LE Read Advertising Physical Channel Tx Power"

    public struct ReturnParameters: HCIReturnParameters {
        /// dBm, -127...20.
        public var txPowerLevel: Int8

        public init(txPowerLevel: Int8) { self.txPowerLevel = txPowerLevel }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            txPowerLevel = try reader.readInt8()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(txPowerLevel)
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

    static func read(_ reader: inout ByteReader, field: String) throws(PacketDecodingError) -> [UInt8] {
        let length = Int(try reader.readUInt8())
        guard length <= capacity else {
            throw .invalidValue(context: reader.context, field: field, value: UInt64(length))
        }
        let block = try reader.readBytes(capacity)
        return Array(block.prefix(length))
    }

    static func write(_ data: [UInt8], into writer: inout ByteWriter) {
        let significant = Array(data.prefix(capacity))
        writer.write(UInt8(significant.count))
        writer.writeFixed(significant, count: capacity)
    }
}

/// LE Set Advertising Data (Core 6.0, Vol 4, Part E, 7.8.7). The parameter is always 32
/// octets: the length, then the data zero-padded to 31 octets.
public struct LESetAdvertisingDataCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0008)
    public static let name = "LE Set Advertising Data"
    /// The most advertising data a legacy advertisement carries.
    public static let maximumDataLength = LegacyAdvertisingDataField.capacity

    /// At most ``maximumDataLength`` octets; the encoder writes only the first 31.
    public var data: [UInt8]

    public init(data: [UInt8]) { self.data = data }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        data = try LegacyAdvertisingDataField.read(&reader, field: "Advertising_Data_Length")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        LegacyAdvertisingDataField.write(data, into: &writer)
    }
}

/// LE Set Scan Response Data (Core 6.0, Vol 4, Part E, 7.8.8). The parameter is always 32
/// octets: the length, then the data zero-padded to 31 octets.
public struct LESetScanResponseDataCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0009)
    public static let name = "LE Set Scan Response Data"
    /// The most scan response data a legacy advertisement carries.
    public static let maximumDataLength = LegacyAdvertisingDataField.capacity

    /// At most ``maximumDataLength`` octets; the encoder writes only the first 31.
    public var data: [UInt8]

    public init(data: [UInt8]) { self.data = data }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        data = try LegacyAdvertisingDataField.read(&reader, field: "Scan_Response_Data_Length")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        LegacyAdvertisingDataField.write(data, into: &writer)
    }
}

/// LE Set Advertising Enable (Core 6.0, Vol 4, Part E, 7.8.9): starts or stops legacy
/// advertising.
public struct LESetAdvertisingEnableCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000A)
    public static let name = "LE Set Advertising Enable"

    public var enable: Bool

    public init(enable: Bool) { self.enable = enable }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        enable = try reader.readBool(field: "Advertising_Enable")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(enable)
    }
}
