import BluetoothCore

/// LE Set Data Length (Core 6.0, Vol 4, Part E, 7.8.33): the largest LL payload (and its
/// air time) the controller should send on a connection.
public struct LESetDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0022)
    public static let name = "LE Set Data Length"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16
    /// 0x001B...0x00FB octets.
    public var txOctets: UInt16
    /// 0x0148...0x4290 microseconds.
    public var txTime: UInt16

    public init(connectionHandle: UInt16, txOctets: UInt16, txTime: UInt16) {
        self.connectionHandle = connectionHandle
        self.txOctets = txOctets
        self.txTime = txTime
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
        txOctets = try reader.readUInt16()
        txTime = try reader.readUInt16()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
        writer.write(txOctets)
        writer.write(txTime)
    }
}

/// LE Write Suggested Default Data Length (Core 6.0, Vol 4, Part E, 7.8.35): the data length
/// the controller uses for new connections.
public struct LEWriteSuggestedDefaultDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0024)
    public static let name = "LE Write Suggested Default Data Length"

    /// 0x001B...0x00FB octets.
    public var suggestedMaxTxOctets: UInt16
    /// 0x0148...0x4290 microseconds.
    public var suggestedMaxTxTime: UInt16

    public init(suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
        self.suggestedMaxTxOctets = suggestedMaxTxOctets
        self.suggestedMaxTxTime = suggestedMaxTxTime
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        suggestedMaxTxOctets = try reader.readUInt16()
        suggestedMaxTxTime = try reader.readUInt16()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(suggestedMaxTxOctets)
        writer.write(suggestedMaxTxTime)
    }
}

/// LE Read Maximum Data Length (Core 6.0, Vol 4, Part E, 7.8.46): the largest LL payloads the
/// controller supports.
public struct LEReadMaximumDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x002F)
    public static let name = "LE Read Maximum Data Length"

    public struct ReturnParameters: HCIReturnParameters {
        public var supportedMaxTxOctets: UInt16
        public var supportedMaxTxTime: UInt16
        public var supportedMaxRxOctets: UInt16
        public var supportedMaxRxTime: UInt16

        public init(supportedMaxTxOctets: UInt16, supportedMaxTxTime: UInt16, supportedMaxRxOctets: UInt16, supportedMaxRxTime: UInt16) {
            self.supportedMaxTxOctets = supportedMaxTxOctets
            self.supportedMaxTxTime = supportedMaxTxTime
            self.supportedMaxRxOctets = supportedMaxRxOctets
            self.supportedMaxRxTime = supportedMaxRxTime
        }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            supportedMaxTxOctets = try reader.readUInt16()
            supportedMaxTxTime = try reader.readUInt16()
            supportedMaxRxOctets = try reader.readUInt16()
            supportedMaxRxTime = try reader.readUInt16()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(supportedMaxTxOctets)
            writer.write(supportedMaxTxTime)
            writer.write(supportedMaxRxOctets)
            writer.write(supportedMaxRxTime)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read PHY (Core 6.0, Vol 4, Part E, 7.8.47): the current PHYs of a connection.
public struct LEReadPHYCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0030)
    public static let name = "LE Read PHY"

    public struct ReturnParameters: HCIReturnParameters {
        public static var leadsWithConnectionHandle: Bool { true }

        public var connectionHandle: UInt16
        public var txPHY: LEPhy
        public var rxPHY: LEPhy

        public init(connectionHandle: UInt16, txPHY: LEPhy, rxPHY: LEPhy) {
            self.connectionHandle = connectionHandle
            self.txPHY = txPHY
            self.rxPHY = rxPHY
        }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            connectionHandle = try reader.readConnectionHandle()
            txPHY = try reader.readEnum(field: "TX_PHY")
            rxPHY = try reader.readEnum(field: "RX_PHY")
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.writeConnectionHandle(connectionHandle)
            writer.write(txPHY.rawValue)
            writer.write(rxPHY.rawValue)
        }
    }

    public var connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
    }
}

/// LE Set PHY (Core 6.0, Vol 4, Part E, 7.8.49): asks for other PHYs on a connection.
/// Answered by Command Status; LE PHY Update Complete follows.
public struct LESetPHYCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0032)
    public static let name = "LE Set PHY"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16
    public var allPHYs: LEAllPHYsPreference
    /// The PHYs the host prefers to transmit on.
    public var txPHYs: LEPhySet
    /// The PHYs the host prefers to receive on.
    public var rxPHYs: LEPhySet
    public var phyOptions: LECodedPHYOptions

    public init(connectionHandle: UInt16, allPHYs: LEAllPHYsPreference = [], txPHYs: LEPhySet, rxPHYs: LEPhySet,
                phyOptions: LECodedPHYOptions = .noPreference) {
        self.connectionHandle = connectionHandle
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
        self.phyOptions = phyOptions
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
        allPHYs = LEAllPHYsPreference(rawValue: try reader.readUInt8())
        txPHYs = LEPhySet(rawValue: try reader.readUInt8())
        rxPHYs = LEPhySet(rawValue: try reader.readUInt8())
        phyOptions = try reader.readEnum(field: "PHY_Options")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
        writer.write(allPHYs.rawValue)
        writer.write(txPHYs.rawValue)
        writer.write(rxPHYs.rawValue)
        writer.write(phyOptions.rawValue)
    }
}

/// LE Read Suggested Default Data Length (Core 6.0, Vol 4, Part E, 7.8.34): the data length
/// the controller uses for new connections.
public struct LEReadSuggestedDefaultDataLengthCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0023)
    public static let name = "LE Read Suggested Default Data Length"

    public struct ReturnParameters: HCIReturnParameters {
        public var suggestedMaxTxOctets: UInt16
        public var suggestedMaxTxTime: UInt16

        public init(suggestedMaxTxOctets: UInt16, suggestedMaxTxTime: UInt16) {
            self.suggestedMaxTxOctets = suggestedMaxTxOctets
            self.suggestedMaxTxTime = suggestedMaxTxTime
        }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            suggestedMaxTxOctets = try reader.readUInt16()
            suggestedMaxTxTime = try reader.readUInt16()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(suggestedMaxTxOctets)
            writer.write(suggestedMaxTxTime)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Set Default PHY (Core 6.0, Vol 4, Part E, 7.8.48): the PHYs the host prefers on every
/// later connection. Answered by Command Complete.
public struct LESetDefaultPHYCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0031)
    public static let name = "LE Set Default PHY"

    public var allPHYs: LEAllPHYsPreference
    /// The PHYs the host prefers to transmit on.
    public var txPHYs: LEPhySet
    /// The PHYs the host prefers to receive on.
    public var rxPHYs: LEPhySet

    public init(allPHYs: LEAllPHYsPreference = [], txPHYs: LEPhySet, rxPHYs: LEPhySet) {
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        allPHYs = LEAllPHYsPreference(rawValue: try reader.readUInt8())
        txPHYs = LEPhySet(rawValue: try reader.readUInt8())
        rxPHYs = LEPhySet(rawValue: try reader.readUInt8())
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(allPHYs.rawValue)
        writer.write(txPHYs.rawValue)
        writer.write(rxPHYs.rawValue)
    }
}
