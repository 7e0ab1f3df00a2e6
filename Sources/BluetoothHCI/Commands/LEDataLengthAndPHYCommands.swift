import BluetoothCore

/// LE Set Data Length (Core 6.0, Vol 4, Part E, 7.8.33): the largest LL payload (and its
/// air time) the controller should send on a connection.
public struct LESetDataLengthCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0022)
    public static let name = "LE Set Data Length"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16 = 0
    /// 0x001B...0x00FB octets.
    public var txOctets: UInt16 = 0
    /// 0x0148...0x4290 microseconds.
    public var txTime: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16, txOctets: UInt16, txTime: UInt16) {
        self.connectionHandle = connectionHandle
        self.txOctets = txOctets
        self.txTime = txTime
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint16(&txOctets)
        try coder.uint16(&txTime)
    }
}

/// LE Write Suggested Default Data Length (Core 6.0, Vol 4, Part E, 7.8.35): the data length
/// the controller uses for new connections.
public struct LEWriteSuggestedDefaultDataLengthCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0024)
    public static let name = "LE Write Suggested Default Data Length"

    /// 0x001B...0x00FB octets.
    public var suggestedMaxTxOctets: UInt16 = 0
    /// 0x0148...0x4290 microseconds.
    public var suggestedMaxTxTime: UInt16 = 0

    public init() {}

    public init(suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
        self.suggestedMaxTxOctets = suggestedMaxTxOctets
        self.suggestedMaxTxTime = suggestedMaxTxTime
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&suggestedMaxTxOctets)
        try coder.uint16(&suggestedMaxTxTime)
    }
}

/// LE Read Maximum Data Length (Core 6.0, Vol 4, Part E, 7.8.46): the largest LL payloads the
/// controller supports.
public struct LEReadMaximumDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x002F)
    public static let name = "LE Read Maximum Data Length"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var supportedMaxTxOctets: UInt16 = 0
        public var supportedMaxTxTime: UInt16 = 0
        public var supportedMaxRxOctets: UInt16 = 0
        public var supportedMaxRxTime: UInt16 = 0

        public init() {}

        public init(supportedMaxTxOctets: UInt16, supportedMaxTxTime: UInt16, supportedMaxRxOctets: UInt16, supportedMaxRxTime: UInt16) {
            self.supportedMaxTxOctets = supportedMaxTxOctets
            self.supportedMaxTxTime = supportedMaxTxTime
            self.supportedMaxRxOctets = supportedMaxRxOctets
            self.supportedMaxRxTime = supportedMaxRxTime
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&supportedMaxTxOctets)
            try coder.uint16(&supportedMaxTxTime)
            try coder.uint16(&supportedMaxRxOctets)
            try coder.uint16(&supportedMaxRxTime)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read PHY (Core 6.0, Vol 4, Part E, 7.8.47): the current PHYs of a connection.
public struct LEReadPHYCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0030)
    public static let name = "LE Read PHY"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public static var leadsWithConnectionHandle: Bool { true }

        public var connectionHandle: UInt16 = 0
        public var txPHY: LEPhy = .le1M
        public var rxPHY: LEPhy = .le1M

        public init() {}

        public init(connectionHandle: UInt16, txPHY: LEPhy, rxPHY: LEPhy) {
            self.connectionHandle = connectionHandle
            self.txPHY = txPHY
            self.rxPHY = rxPHY
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.connectionHandle(&connectionHandle)
            try coder.uint8(&txPHY, field: "TX_PHY")
            try coder.uint8(&rxPHY, field: "RX_PHY")
        }
    }

    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
    }
}

/// LE Set PHY (Core 6.0, Vol 4, Part E, 7.8.49): asks for other PHYs on a connection.
/// Answered by Command Status; LE PHY Update Complete follows.
public struct LESetPHYCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0032)
    public static let name = "LE Set PHY"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16 = 0
    public var allPHYs: LEAllPHYsPreference = []
    /// The PHYs the host prefers to transmit on.
    public var txPHYs: LEPhySet = []
    /// The PHYs the host prefers to receive on.
    public var rxPHYs: LEPhySet = []
    public var phyOptions: LECodedPHYOptions = .noPreference

    public init() {}

    public init(connectionHandle: UInt16, allPHYs: LEAllPHYsPreference = [], txPHYs: LEPhySet, rxPHYs: LEPhySet,
                phyOptions: LECodedPHYOptions = .noPreference) {
        self.connectionHandle = connectionHandle
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
        self.phyOptions = phyOptions
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&allPHYs, field: "All_PHYs")
        try coder.uint8(&txPHYs, field: "TX_PHYs")
        try coder.uint8(&rxPHYs, field: "RX_PHYs")
        try coder.uint16(&phyOptions, field: "PHY_Options")
    }
}

/// LE Read Suggested Default Data Length (Core 6.0, Vol 4, Part E, 7.8.34): the data length
/// the controller uses for new connections.
public struct LEReadSuggestedDefaultDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0023)
    public static let name = "LE Read Suggested Default Data Length"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var suggestedMaxTxOctets: UInt16 = 0
        public var suggestedMaxTxTime: UInt16 = 0

        public init() {}

        public init(suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
            self.suggestedMaxTxOctets = suggestedMaxTxOctets
            self.suggestedMaxTxTime = suggestedMaxTxTime
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&suggestedMaxTxOctets)
            try coder.uint16(&suggestedMaxTxTime)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Set Default PHY (Core 6.0, Vol 4, Part E, 7.8.48): the PHYs the host prefers on every
/// later connection. Answered by Command Complete.
public struct LESetDefaultPHYCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0031)
    public static let name = "LE Set Default PHY"

    public var allPHYs: LEAllPHYsPreference = []
    /// The PHYs the host prefers to transmit on.
    public var txPHYs: LEPhySet = []
    /// The PHYs the host prefers to receive on.
    public var rxPHYs: LEPhySet = []

    public init() {}

    public init(allPHYs: LEAllPHYsPreference = [], txPHYs: LEPhySet, rxPHYs: LEPhySet) {
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&allPHYs, field: "All_PHYs")
        try coder.uint8(&txPHYs, field: "TX_PHYs")
        try coder.uint8(&rxPHYs, field: "RX_PHYs")
    }
}
