import BluetoothCore

/// LE Set Advertising Set Random Address (Core 6.0, Vol 4, Part E, 7.8.52): the random
/// address one advertising set uses.
public struct LESetAdvertisingSetRandomAddressCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0035)
    public static let name = "LE Set Advertising Set Random Address"

    public var advertisingHandle: UInt8
    public var randomAddress: BluetoothAddress

    public init(advertisingHandle: UInt8, randomAddress: BluetoothAddress) {
        self.advertisingHandle = advertisingHandle
        self.randomAddress = randomAddress
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        advertisingHandle = try reader.readUInt8()
        randomAddress = try reader.readAddress()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(randomAddress)
    }
}

/// LE Set Extended Advertising Parameters [v1] (Core 6.0, Vol 4, Part E, 7.8.53): creates or
/// changes an advertising set. The intervals are 3 octets each.
public struct LESetExtendedAdvertisingParametersCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0036)
    public static let name = "LE Set Extended Advertising Parameters"

    public struct ReturnParameters: HCIReturnParameters {
        /// The TX power the controller chose, dBm.
        public var selectedTxPower: Int8
        public init(selectedTxPower: Int8) { self.selectedTxPower = selectedTxPower }
        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            selectedTxPower = try reader.readInt8()
        }
        public func encodeReturnParameters(into writer: inout ByteWriter) { writer.write(selectedTxPower) }
    }

    /// 0x00...0xEF.
    public var advertisingHandle: UInt8
    public var properties: AdvertisingEventProperties
    /// Units of 0.625 ms, 0x000020...0xFFFFFF (24 bits).
    public var primaryIntervalMin: UInt32
    public var primaryIntervalMax: UInt32
    public var primaryChannelMap: AdvertisingChannelMap
    public var ownAddressType: OwnAddressType
    /// Public or random: the target of directed advertising.
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var filterPolicy: AdvertisingFilterPolicy
    /// dBm, `nil` for no preference (0x7F).
    public var txPower: Int8?
    /// LE 1M or LE Coded.
    public var primaryPHY: LEPhy
    public var secondaryMaxSkip: UInt8
    /// LE 1M, LE 2M or LE Coded.
    public var secondaryPHY: LEPhy
    /// 0x00...0x0F.
    public var advertisingSID: UInt8
    public var scanRequestNotificationEnable: Bool

    /// The most sets a controller can number (7.8.53: Advertising_Handle 0x00 to 0xEF).
    public static let maximumHandle: UInt8 = 0xEF
    /// The largest Advertising_SID (7.8.53).
    public static let maximumSID: UInt8 = 0x0F

    public init(advertisingHandle: UInt8, properties: AdvertisingEventProperties, primaryIntervalMin: UInt32 = 0x0800,
                primaryIntervalMax: UInt32 = 0x0800, primaryChannelMap: AdvertisingChannelMap = .all,
                ownAddressType: OwnAddressType = .public, peerAddressType: AddressType = .public, peerAddress: BluetoothAddress = .zero,
                filterPolicy: AdvertisingFilterPolicy = .acceptAll, txPower: Int8? = nil, primaryPHY: LEPhy = .le1M,
                secondaryMaxSkip: UInt8 = 0, secondaryPHY: LEPhy = .le1M, advertisingSID: UInt8 = 0,
                scanRequestNotificationEnable: Bool = false) {
        self.advertisingHandle = advertisingHandle
        self.properties = properties
        self.primaryIntervalMin = primaryIntervalMin
        self.primaryIntervalMax = primaryIntervalMax
        self.primaryChannelMap = primaryChannelMap
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.filterPolicy = filterPolicy
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryMaxSkip = secondaryMaxSkip
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.scanRequestNotificationEnable = scanRequestNotificationEnable
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        advertisingHandle = try reader.readUInt8()
        properties = AdvertisingEventProperties(rawValue: try reader.readUInt16())
        primaryIntervalMin = try reader.readUInt24()
        primaryIntervalMax = try reader.readUInt24()
        primaryChannelMap = AdvertisingChannelMap(rawValue: try reader.readUInt8())
        ownAddressType = try reader.readEnum(field: "Own_Address_Type")
        peerAddressType = try reader.readPublicOrRandomAddressType(field: "Peer_Address_Type")
        peerAddress = try reader.readAddress()
        filterPolicy = try reader.readEnum(field: "Advertising_Filter_Policy")
        txPower = try reader.readOptionalPower()
        primaryPHY = try reader.readEnum(field: "Primary_Advertising_PHY")
        secondaryMaxSkip = try reader.readUInt8()
        secondaryPHY = try reader.readEnum(field: "Secondary_Advertising_PHY")
        advertisingSID = try reader.readUInt8()
        scanRequestNotificationEnable = try reader.readBool(field: "Scan_Request_Notification_Enable")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(properties.rawValue)
        writer.writeUInt24(primaryIntervalMin)
        writer.writeUInt24(primaryIntervalMax)
        writer.write(primaryChannelMap.rawValue)
        writer.write(ownAddressType.rawValue)
        writer.write(peerAddressType.base.rawValue)
        writer.write(peerAddress)
        writer.write(filterPolicy.rawValue)
        writer.writeOptionalPower(txPower)
        writer.write(primaryPHY.rawValue)
        writer.write(secondaryMaxSkip)
        writer.write(secondaryPHY.rawValue)
        writer.write(advertisingSID)
        writer.write(scanRequestNotificationEnable)
    }
}

/// The parameters LE Set Extended Advertising Data and LE Set Extended Scan Response Data
/// share (Core 6.0, Vol 4, Part E, 7.8.54-7.8.55).
public protocol ExtendedAdvertisingDataCommand: HCICommand {
    var advertisingHandle: UInt8 { get }
    var operation: AdvertisingDataOperation { get }
    var fragmentPreference: AdvertisingFragmentPreference { get }
    var data: [UInt8] { get }
    init(advertisingHandle: UInt8, operation: AdvertisingDataOperation, fragmentPreference: AdvertisingFragmentPreference, data: [UInt8])
}

extension ExtendedAdvertisingDataCommand {
    /// The most data one command carries: the parameters must fit in 255 octets, and the
    /// four octets before the data leave 251 (7.8.54).
    public static var maximumFragmentLength: Int { 251 }

    /// The commands that hand `data` to the controller: one `complete` command when it fits
    /// (also when it is empty), else a first, intermediate and last fragments of at most
    /// ``maximumFragmentLength`` octets each, in order (7.8.54: the host fragments).
    public static func fragments(of data: [UInt8], advertisingHandle: UInt8,
                                 fragmentPreference: AdvertisingFragmentPreference = .controllerMayFragment) -> [Self] {
        guard data.count > maximumFragmentLength else {
            return [Self(advertisingHandle: advertisingHandle, operation: .complete, fragmentPreference: fragmentPreference, data: data)]
        }
        var commands: [Self] = []
        var offset = 0
        while offset < data.count {
            let end = min(offset + maximumFragmentLength, data.count)
            let operation: AdvertisingDataOperation = offset == 0 ? .firstFragment : end == data.count ? .lastFragment : .intermediateFragment
            commands.append(Self(advertisingHandle: advertisingHandle, operation: operation, fragmentPreference: fragmentPreference,
                                 data: Array(data[offset..<end])))
            offset = end
        }
        return commands
    }

    static func read(_ reader: inout ByteReader) throws(PacketDecodingError) -> Self {
        let handle = try reader.readUInt8()
        let operation: AdvertisingDataOperation = try reader.readEnum(field: "Operation")
        let preference: AdvertisingFragmentPreference = try reader.readEnum(field: "Fragment_Preference")
        let data = try reader.readLengthPrefixedBytes(maximum: maximumFragmentLength, field: "Data_Length")
        return Self(advertisingHandle: handle, operation: operation, fragmentPreference: preference, data: data)
    }

    func write(into writer: inout ByteWriter) {
        writer.write(advertisingHandle)
        writer.write(operation.rawValue)
        writer.write(fragmentPreference.rawValue)
        writer.write(UInt8(clamping: data.count))
        writer.write(contentsOf: data.prefix(Self.maximumFragmentLength))
    }
}

/// LE Set Extended Advertising Data (Core 6.0, Vol 4, Part E, 7.8.54).
public struct LESetExtendedAdvertisingDataCommand: ExtendedAdvertisingDataCommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0037)
    public static let name = "LE Set Extended Advertising Data"

    public var advertisingHandle: UInt8
    public var operation: AdvertisingDataOperation
    public var fragmentPreference: AdvertisingFragmentPreference
    /// At most ``maximumFragmentLength`` octets.
    public var data: [UInt8]

    public init(advertisingHandle: UInt8, operation: AdvertisingDataOperation = .complete,
                fragmentPreference: AdvertisingFragmentPreference = .controllerMayFragment, data: [UInt8]) {
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { self = try Self.read(&reader) }
    public func encodeParameters(into writer: inout ByteWriter) { write(into: &writer) }
}

/// LE Set Extended Scan Response Data (Core 6.0, Vol 4, Part E, 7.8.55).
public struct LESetExtendedScanResponseDataCommand: ExtendedAdvertisingDataCommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0038)
    public static let name = "LE Set Extended Scan Response Data"

    public var advertisingHandle: UInt8
    public var operation: AdvertisingDataOperation
    public var fragmentPreference: AdvertisingFragmentPreference
    /// At most ``maximumFragmentLength`` octets.
    public var data: [UInt8]

    public init(advertisingHandle: UInt8, operation: AdvertisingDataOperation = .complete,
                fragmentPreference: AdvertisingFragmentPreference = .controllerMayFragment, data: [UInt8]) {
        self.advertisingHandle = advertisingHandle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { self = try Self.read(&reader) }
    public func encodeParameters(into writer: inout ByteWriter) { write(into: &writer) }
}

/// LE Set Extended Advertising Enable (Core 6.0, Vol 4, Part E, 7.8.56): starts or stops
/// several sets at once. The sets' fields are laid out one set after another. Disabling with
/// no sets disables every set.
public struct LESetExtendedAdvertisingEnableCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0039)
    public static let name = "LE Set Extended Advertising Enable"

    /// One set to start or stop.
    public struct Set: Sendable, Hashable {
        public var advertisingHandle: UInt8
        /// Units of 10 ms; 0 advertises until disabled.
        public var duration: UInt16
        /// 0 sets no limit.
        public var maxExtendedAdvertisingEvents: UInt8

        public init(advertisingHandle: UInt8, duration: UInt16 = 0, maxExtendedAdvertisingEvents: UInt8 = 0) {
            self.advertisingHandle = advertisingHandle
            self.duration = duration
            self.maxExtendedAdvertisingEvents = maxExtendedAdvertisingEvents
        }
    }

    public var enable: Bool
    public var sets: [Set]

    /// The most sets one command can name: the parameters must fit in 255 octets (2 + 4 each).
    public static let maximumSets = 63

    public init(enable: Bool, sets: [Set]) {
        self.enable = enable
        self.sets = sets
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        enable = try reader.readBool(field: "Enable")
        let count = try reader.readUInt8()
        // Core 6.0, Vol 4, Part E, 7.8.56: enabling needs at least one set.
        guard Int(count) <= Self.maximumSets, !(enable && count == 0) else {
            throw .invalidValue(context: reader.context, field: "Num_Sets", value: UInt64(count))
        }
        var sets: [Set] = []
        for _ in 0..<count {
            sets.append(Set(advertisingHandle: try reader.readUInt8(), duration: try reader.readUInt16(),
                            maxExtendedAdvertisingEvents: try reader.readUInt8()))
        }
        self.sets = sets
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        let sets = sets.prefix(Self.maximumSets)
        writer.write(enable)
        writer.write(UInt8(sets.count))
        for set in sets {
            writer.write(set.advertisingHandle)
            writer.write(set.duration)
            writer.write(set.maxExtendedAdvertisingEvents)
        }
    }
}

/// LE Read Maximum Advertising Data Length (Core 6.0, Vol 4, Part E, 7.8.57).
public struct LEReadMaximumAdvertisingDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003A)
    public static let name = "LE Read Maximum Advertising Data Length"

    public struct ReturnParameters: HCIReturnParameters {
        /// 0x001F...0x0672 (31 to 1650 octets).
        public var maximumAdvertisingDataLength: UInt16
        public init(maximumAdvertisingDataLength: UInt16) { self.maximumAdvertisingDataLength = maximumAdvertisingDataLength }
        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            maximumAdvertisingDataLength = try reader.readUInt16()
        }
        public func encodeReturnParameters(into writer: inout ByteWriter) { writer.write(maximumAdvertisingDataLength) }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read Number of Supported Advertising Sets (Core 6.0, Vol 4, Part E, 7.8.58).
public struct LEReadNumberOfSupportedAdvertisingSetsCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003B)
    public static let name = "LE Read Number of Supported Advertising Sets"

    public struct ReturnParameters: HCIReturnParameters {
        /// 0x01...0xF0.
        public var numSupportedAdvertisingSets: UInt8
        public init(numSupportedAdvertisingSets: UInt8) { self.numSupportedAdvertisingSets = numSupportedAdvertisingSets }
        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            numSupportedAdvertisingSets = try reader.readUInt8()
        }
        public func encodeReturnParameters(into writer: inout ByteWriter) { writer.write(numSupportedAdvertisingSets) }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Remove Advertising Set (Core 6.0, Vol 4, Part E, 7.8.59).
public struct LERemoveAdvertisingSetCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003C)
    public static let name = "LE Remove Advertising Set"

    public var advertisingHandle: UInt8

    public init(advertisingHandle: UInt8) { self.advertisingHandle = advertisingHandle }
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { advertisingHandle = try reader.readUInt8() }
    public func encodeParameters(into writer: inout ByteWriter) { writer.write(advertisingHandle) }
}

/// LE Clear Advertising Sets (Core 6.0, Vol 4, Part E, 7.8.60).
public struct LEClearAdvertisingSetsCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003D)
    public static let name = "LE Clear Advertising Sets"

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
