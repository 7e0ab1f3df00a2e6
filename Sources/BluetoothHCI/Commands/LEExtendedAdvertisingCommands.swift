import BluetoothCore

/// LE Set Advertising Set Random Address (Core 6.0, Vol 4, Part E, 7.8.52): the random
/// address one advertising set uses.
public struct LESetAdvertisingSetRandomAddressCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0035)
    public static let name = "LE Set Advertising Set Random Address"

    public var advertisingHandle: UInt8 = 0
    public var randomAddress: BluetoothAddress = .zero

    public init() {}

    public init(advertisingHandle: UInt8, randomAddress: BluetoothAddress) {
        self.advertisingHandle = advertisingHandle
        self.randomAddress = randomAddress
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&advertisingHandle)
        try coder.address(&randomAddress)
    }
}

/// LE Set Extended Advertising Parameters [v1] (Core 6.0, Vol 4, Part E, 7.8.53): creates or
/// changes an advertising set. The intervals are 3 octets each.
public struct LESetExtendedAdvertisingParametersCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0036)
    public static let name = "LE Set Extended Advertising Parameters"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// The TX power the controller chose, dBm.
        public var selectedTxPower: Int8 = 0
        public init() {}
        public init(selectedTxPower: Int8) { self.selectedTxPower = selectedTxPower }
        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.int8(&selectedTxPower)
        }
    }

    /// 0x00...0xEF.
    public var advertisingHandle: UInt8 = 0
    public var properties: AdvertisingEventProperties = []
    /// Units of 0.625 ms, 0x000020...0xFFFFFF (24 bits).
    public var primaryIntervalMin: UInt32 = 0
    public var primaryIntervalMax: UInt32 = 0
    public var primaryChannelMap: AdvertisingChannelMap = []
    public var ownAddressType: OwnAddressType = .public
    /// Public or random: the target of directed advertising.
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    public var filterPolicy: AdvertisingFilterPolicy = .acceptAll
    /// dBm, `nil` for no preference (0x7F).
    public var txPower: Int8?
    /// LE 1M or LE Coded.
    public var primaryPHY: LEPhy = .le1M
    public var secondaryMaxSkip: UInt8 = 0
    /// LE 1M, LE 2M or LE Coded.
    public var secondaryPHY: LEPhy = .le1M
    /// 0x00...0x0F.
    public var advertisingSID: UInt8 = 0
    public var scanRequestNotificationEnable: Bool = false

    /// The most sets a controller can number (7.8.53: Advertising_Handle 0x00 to 0xEF).
    public static let maximumHandle: UInt8 = 0xEF
    /// The largest Advertising_SID (7.8.53).
    public static let maximumSID: UInt8 = 0x0F

    public init() {}

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

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&advertisingHandle)
        try coder.uint16(&properties, field: "Advertising_Event_Properties")
        try coder.uint24(&primaryIntervalMin)
        try coder.uint24(&primaryIntervalMax)
        try coder.uint8(&primaryChannelMap, field: "Primary_Advertising_Channel_Map")
        try coder.uint8(&ownAddressType, field: "Own_Address_Type")
        try coder.publicOrRandomAddressType(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        try coder.uint8(&filterPolicy, field: "Advertising_Filter_Policy")
        try coder.optionalPower(&txPower)
        try coder.uint8(&primaryPHY, field: "Primary_Advertising_PHY")
        try coder.uint8(&secondaryMaxSkip)
        try coder.uint8(&secondaryPHY, field: "Secondary_Advertising_PHY")
        try coder.uint8(&advertisingSID)
        try coder.bool(&scanRequestNotificationEnable, field: "Scan_Request_Notification_Enable")
    }
}

/// The parameters LE Set Extended Advertising Data and LE Set Extended Scan Response Data
/// share (Core 6.0, Vol 4, Part E, 7.8.54-7.8.55).
public protocol ExtendedAdvertisingDataCommand: HCICommand, PacketFields {
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

    public init() { self.init(advertisingHandle: 0, operation: .complete, fragmentPreference: .controllerMayFragment, data: []) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        var handle = advertisingHandle, operation = operation, preference = fragmentPreference, data = data
        try coder.uint8(&handle)
        try coder.uint8(&operation, field: "Operation")
        try coder.uint8(&preference, field: "Fragment_Preference")
        try coder.lengthPrefixedBytes(&data, maximum: Self.maximumFragmentLength, field: "Data_Length")
        self = Self(advertisingHandle: handle, operation: operation, fragmentPreference: preference, data: data)
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
}

/// LE Set Extended Advertising Enable (Core 6.0, Vol 4, Part E, 7.8.56): starts or stops
/// several sets at once. The sets' fields are laid out one set after another. Disabling with
/// no sets disables every set.
public struct LESetExtendedAdvertisingEnableCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0039)
    public static let name = "LE Set Extended Advertising Enable"

    /// One set to start or stop.
    public struct Set: Sendable, Hashable, PacketFields {
        public var advertisingHandle: UInt8 = 0
        /// Units of 10 ms; 0 advertises until disabled.
        public var duration: UInt16 = 0
        /// 0 sets no limit.
        public var maxExtendedAdvertisingEvents: UInt8 = 0

        public init() {}

        public init(advertisingHandle: UInt8, duration: UInt16 = 0, maxExtendedAdvertisingEvents: UInt8 = 0) {
            self.advertisingHandle = advertisingHandle
            self.duration = duration
            self.maxExtendedAdvertisingEvents = maxExtendedAdvertisingEvents
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&advertisingHandle)
            try coder.uint16(&duration)
            try coder.uint8(&maxExtendedAdvertisingEvents)
        }
    }

    public var enable = false
    public var sets: [Set] = []

    /// The most sets one command can name: the parameters must fit in 255 octets (2 + 4 each).
    public static let maximumSets = 63

    public init() {}

    public init(enable: Bool, sets: [Set]) {
        self.enable = enable
        self.sets = sets
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bool(&enable, field: "Enable")
        var count = UInt8(min(sets.count, Self.maximumSets))
        try coder.uint8(&count)
        // Core 6.0, Vol 4, Part E, 7.8.56: enabling needs at least one set.
        try coder.check(Int(count) <= Self.maximumSets && !(enable && count == 0), field: "Num_Sets", value: count)
        try coder.list(&sets, count: Int(count))
    }
}

/// LE Read Maximum Advertising Data Length (Core 6.0, Vol 4, Part E, 7.8.57).
public struct LEReadMaximumAdvertisingDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003A)
    public static let name = "LE Read Maximum Advertising Data Length"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// 0x001F...0x0672 (31 to 1650 octets).
        public var maximumAdvertisingDataLength: UInt16 = 0
        public init() {}
        public init(maximumAdvertisingDataLength: UInt16) { self.maximumAdvertisingDataLength = maximumAdvertisingDataLength }
        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&maximumAdvertisingDataLength)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read Number of Supported Advertising Sets (Core 6.0, Vol 4, Part E, 7.8.58).
public struct LEReadNumberOfSupportedAdvertisingSetsCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003B)
    public static let name = "LE Read Number of Supported Advertising Sets"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// 0x01...0xF0.
        public var numSupportedAdvertisingSets: UInt8 = 0
        public init() {}
        public init(numSupportedAdvertisingSets: UInt8) { self.numSupportedAdvertisingSets = numSupportedAdvertisingSets }
        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&numSupportedAdvertisingSets)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Remove Advertising Set (Core 6.0, Vol 4, Part E, 7.8.59).
public struct LERemoveAdvertisingSetCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003C)
    public static let name = "LE Remove Advertising Set"

    public var advertisingHandle: UInt8 = 0

    public init() {}

    public init(advertisingHandle: UInt8) { self.advertisingHandle = advertisingHandle }
    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&advertisingHandle)
    }
}

/// LE Clear Advertising Sets (Core 6.0, Vol 4, Part E, 7.8.60).
public struct LEClearAdvertisingSetsCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x003D)
    public static let name = "LE Clear Advertising Sets"

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
