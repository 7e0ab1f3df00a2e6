import BluetoothCore

/// LE Create Connection (Core 6.0, Vol 4, Part E, 7.8.12): legacy initiating. Answered by
/// Command Status; LE (Enhanced) Connection Complete follows.
public struct LECreateConnectionCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000D)
    public static let name = "LE Create Connection"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    /// In units of 0.625 ms.
    public var scanInterval: UInt16
    /// In units of 0.625 ms.
    public var scanWindow: UInt16
    public var initiatorFilterPolicy: InitiatorFilterPolicy
    /// Public, random, or (with LL privacy) an identity address type.
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var ownAddressType: OwnAddressType
    /// In units of 1.25 ms.
    public var connectionIntervalMin: UInt16
    /// In units of 1.25 ms.
    public var connectionIntervalMax: UInt16
    /// In connection events.
    public var maxLatency: UInt16
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16
    /// In units of 0.625 ms.
    public var minCELength: UInt16
    /// In units of 0.625 ms.
    public var maxCELength: UInt16

    public init(scanInterval: UInt16, scanWindow: UInt16, initiatorFilterPolicy: InitiatorFilterPolicy = .usePeerAddress,
                peerAddressType: AddressType, peerAddress: BluetoothAddress, ownAddressType: OwnAddressType = .public,
                connectionIntervalMin: UInt16, connectionIntervalMax: UInt16, maxLatency: UInt16, supervisionTimeout: UInt16,
                minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    /// The peer as an address with its type.
    public var peer: DeviceAddress { DeviceAddress(peerAddress, type: peerAddressType) }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        scanInterval = try reader.readUInt16()
        scanWindow = try reader.readUInt16()
        initiatorFilterPolicy = try reader.readEnum(field: "Initiator_Filter_Policy")
        peerAddressType = try reader.readEnum(field: "Peer_Address_Type")
        peerAddress = try reader.readAddress()
        ownAddressType = try reader.readEnum(field: "Own_Address_Type")
        connectionIntervalMin = try reader.readUInt16()
        connectionIntervalMax = try reader.readUInt16()
        maxLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        minCELength = try reader.readUInt16()
        maxCELength = try reader.readUInt16()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(scanInterval)
        writer.write(scanWindow)
        writer.write(initiatorFilterPolicy.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(peerAddress)
        writer.write(ownAddressType.rawValue)
        writer.write(connectionIntervalMin)
        writer.write(connectionIntervalMax)
        writer.write(maxLatency)
        writer.write(supervisionTimeout)
        writer.write(minCELength)
        writer.write(maxCELength)
    }
}

/// LE Extended Create Connection [v1] (Core 6.0, Vol 4, Part E, 7.8.66): initiating on one or
/// more PHYs. Answered by Command Status; LE Enhanced Connection Complete and LE Channel
/// Selection Algorithm follow. The Initiating_PHYs bit field is derived from which of
/// ``le1M``, ``le2M`` and ``leCoded`` are present; their parameter sets follow it in bit order.
public struct LEExtendedCreateConnectionCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0043)
    public static let name = "LE Extended Create Connection"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    /// The scan and connection parameters for one initiating PHY (16 octets on the wire).
    public struct PHYParameters: Sendable, Equatable {
        /// In units of 0.625 ms (ignored for LE 2M, which is not scanned).
        public var scanInterval: UInt16
        /// In units of 0.625 ms (ignored for LE 2M).
        public var scanWindow: UInt16
        /// In units of 1.25 ms.
        public var connectionIntervalMin: UInt16
        /// In units of 1.25 ms.
        public var connectionIntervalMax: UInt16
        public var maxLatency: UInt16
        /// In units of 10 ms.
        public var supervisionTimeout: UInt16
        /// In units of 0.625 ms.
        public var minCELength: UInt16
        /// In units of 0.625 ms.
        public var maxCELength: UInt16

        public init(scanInterval: UInt16, scanWindow: UInt16, connectionIntervalMin: UInt16, connectionIntervalMax: UInt16,
                    maxLatency: UInt16, supervisionTimeout: UInt16, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connectionIntervalMin = connectionIntervalMin
            self.connectionIntervalMax = connectionIntervalMax
            self.maxLatency = maxLatency
            self.supervisionTimeout = supervisionTimeout
            self.minCELength = minCELength
            self.maxCELength = maxCELength
        }

        init(reading reader: inout ByteReader) throws(PacketDecodingError) {
            scanInterval = try reader.readUInt16()
            scanWindow = try reader.readUInt16()
            connectionIntervalMin = try reader.readUInt16()
            connectionIntervalMax = try reader.readUInt16()
            maxLatency = try reader.readUInt16()
            supervisionTimeout = try reader.readUInt16()
            minCELength = try reader.readUInt16()
            maxCELength = try reader.readUInt16()
        }

        func write(to writer: inout ByteWriter) {
            writer.write(scanInterval)
            writer.write(scanWindow)
            writer.write(connectionIntervalMin)
            writer.write(connectionIntervalMax)
            writer.write(maxLatency)
            writer.write(supervisionTimeout)
            writer.write(minCELength)
            writer.write(maxCELength)
        }
    }

    public var initiatorFilterPolicy: InitiatorFilterPolicy
    public var ownAddressType: OwnAddressType
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var le1M: PHYParameters?
    public var le2M: PHYParameters?
    public var leCoded: PHYParameters?

    public init(initiatorFilterPolicy: InitiatorFilterPolicy = .usePeerAddress, ownAddressType: OwnAddressType = .public,
                peerAddressType: AddressType, peerAddress: BluetoothAddress,
                le1M: PHYParameters?, le2M: PHYParameters? = nil, leCoded: PHYParameters? = nil) {
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.le1M = le1M
        self.le2M = le2M
        self.leCoded = leCoded
    }

    /// The peer as an address with its type.
    public var peer: DeviceAddress { DeviceAddress(peerAddress, type: peerAddressType) }

    /// The Initiating_PHYs bit field.
    public var initiatingPHYs: LEPhySet {
        var phys: LEPhySet = []
        if le1M != nil { phys.insert(.le1M) }
        if le2M != nil { phys.insert(.le2M) }
        if leCoded != nil { phys.insert(.leCoded) }
        return phys
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        initiatorFilterPolicy = try reader.readEnum(field: "Initiator_Filter_Policy")
        ownAddressType = try reader.readEnum(field: "Own_Address_Type")
        peerAddressType = try reader.readEnum(field: "Peer_Address_Type")
        peerAddress = try reader.readAddress()
        let phys = LEPhySet(rawValue: try reader.readUInt8())
        guard !phys.isEmpty, phys.isSubset(of: .all) else {
            throw .invalidValue(context: reader.context, field: "Initiating_PHYs", value: UInt64(phys.rawValue))
        }
        le1M = phys.contains(.le1M) ? try PHYParameters(reading: &reader) : nil
        le2M = phys.contains(.le2M) ? try PHYParameters(reading: &reader) : nil
        leCoded = phys.contains(.leCoded) ? try PHYParameters(reading: &reader) : nil
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(initiatorFilterPolicy.rawValue)
        writer.write(ownAddressType.rawValue)
        writer.write(peerAddressType.rawValue)
        writer.write(peerAddress)
        writer.write(initiatingPHYs.rawValue)
        le1M?.write(to: &writer)
        le2M?.write(to: &writer)
        leCoded?.write(to: &writer)
    }
}

/// LE Create Connection Cancel (Core 6.0, Vol 4, Part E, 7.8.13). Once it completes, a
/// connection complete event with Unknown Connection Identifier (0x02) reports the cancel.
public struct LECreateConnectionCancelCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000E)
    public static let name = "LE Create Connection Cancel"
    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Connection Update (Core 6.0, Vol 4, Part E, 7.8.18). Answered by Command Status;
/// LE Connection Update Complete follows.
public struct LEConnectionUpdateCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0013)
    public static let name = "LE Connection Update"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16
    /// In units of 1.25 ms.
    public var connectionIntervalMin: UInt16
    /// In units of 1.25 ms.
    public var connectionIntervalMax: UInt16
    public var maxLatency: UInt16
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16
    /// In units of 0.625 ms.
    public var minCELength: UInt16
    /// In units of 0.625 ms.
    public var maxCELength: UInt16

    public init(connectionHandle: UInt16, connectionIntervalMin: UInt16, connectionIntervalMax: UInt16,
                maxLatency: UInt16, supervisionTimeout: UInt16, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.connectionHandle = connectionHandle
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
        connectionIntervalMin = try reader.readUInt16()
        connectionIntervalMax = try reader.readUInt16()
        maxLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        minCELength = try reader.readUInt16()
        maxCELength = try reader.readUInt16()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
        writer.write(connectionIntervalMin)
        writer.write(connectionIntervalMax)
        writer.write(maxLatency)
        writer.write(supervisionTimeout)
        writer.write(minCELength)
        writer.write(maxCELength)
    }
}

/// LE Read Remote Features (Core 6.0, Vol 4, Part E, 7.8.21). Answered by Command Status;
/// LE Read Remote Features Complete follows.
public struct LEReadRemoteFeaturesCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0016)
    public static let name = "LE Read Remote Features"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
    }
}

/// LE Remote Connection Parameter Request Reply (Core 6.0, Vol 4, Part E, 7.8.31): accepts
/// the peer's request, with the parameters the host wants.
public struct LERemoteConnectionParameterRequestReplyCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0020)
    public static let name = "LE Remote Connection Parameter Request Reply"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16
    /// In units of 1.25 ms.
    public var intervalMin: UInt16
    /// In units of 1.25 ms.
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    /// In units of 10 ms.
    public var timeout: UInt16
    /// In units of 0.625 ms.
    public var minCELength: UInt16
    /// In units of 0.625 ms.
    public var maxCELength: UInt16

    public init(connectionHandle: UInt16, intervalMin: UInt16, intervalMax: UInt16, maxLatency: UInt16, timeout: UInt16,
                minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.connectionHandle = connectionHandle
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.maxLatency = maxLatency
        self.timeout = timeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
        intervalMin = try reader.readUInt16()
        intervalMax = try reader.readUInt16()
        maxLatency = try reader.readUInt16()
        timeout = try reader.readUInt16()
        minCELength = try reader.readUInt16()
        maxCELength = try reader.readUInt16()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
        writer.write(intervalMin)
        writer.write(intervalMax)
        writer.write(maxLatency)
        writer.write(timeout)
        writer.write(minCELength)
        writer.write(maxCELength)
    }
}

/// LE Remote Connection Parameter Request Negative Reply (Core 6.0, Vol 4, Part E, 7.8.32):
/// rejects the peer's request, usually with Unacceptable Connection Parameters (0x3B).
public struct LERemoteConnectionParameterRequestNegativeReplyCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0021)
    public static let name = "LE Remote Connection Parameter Request Negative Reply"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16
    public var reason: HCIStatus

    public init(connectionHandle: UInt16, reason: HCIStatus = .unacceptableConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
        reason = try reader.readStatus()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
        writer.write(reason)
    }
}
