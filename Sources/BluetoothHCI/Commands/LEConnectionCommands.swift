import BluetoothCore

/// LE Create Connection (Core 6.0, Vol 4, Part E, 7.8.12): legacy initiating. Answered by
/// Command Status; LE (Enhanced) Connection Complete follows.
public struct LECreateConnectionCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000D)
    public static let name = "LE Create Connection"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    /// In units of 0.625 ms.
    public var scanInterval: UInt16 = 0
    /// In units of 0.625 ms.
    public var scanWindow: UInt16 = 0
    public var initiatorFilterPolicy: InitiatorFilterPolicy = .usePeerAddress
    /// Public, random, or (with LL privacy) an identity address type.
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    public var ownAddressType: OwnAddressType = .public
    /// In units of 1.25 ms.
    public var connectionIntervalMin: UInt16 = 0
    /// In units of 1.25 ms.
    public var connectionIntervalMax: UInt16 = 0
    /// In connection events.
    public var maxLatency: UInt16 = 0
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16 = 0
    /// In units of 0.625 ms.
    public var minCELength: UInt16 = 0
    /// In units of 0.625 ms.
    public var maxCELength: UInt16 = 0

    public init() {}

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

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&scanInterval)
        try coder.uint16(&scanWindow)
        try coder.uint8(&initiatorFilterPolicy, field: "Initiator_Filter_Policy")
        try coder.uint8(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        try coder.uint8(&ownAddressType, field: "Own_Address_Type")
        try coder.uint16(&connectionIntervalMin)
        try coder.uint16(&connectionIntervalMax)
        try coder.uint16(&maxLatency)
        try coder.uint16(&supervisionTimeout)
        try coder.uint16(&minCELength)
        try coder.uint16(&maxCELength)
    }
}

/// LE Extended Create Connection [v1] (Core 6.0, Vol 4, Part E, 7.8.66): initiating on one or
/// more PHYs. Answered by Command Status; LE Enhanced Connection Complete and LE Channel
/// Selection Algorithm follow. The Initiating_PHYs bit field is derived from which of
/// ``le1M``, ``le2M`` and ``leCoded`` are present; their parameter sets follow it in bit order.
public struct LEExtendedCreateConnectionCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0043)
    public static let name = "LE Extended Create Connection"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    /// The scan and connection parameters for one initiating PHY (16 octets on the wire).
    public struct PHYParameters: Sendable, Equatable, PacketFields {
        /// In units of 0.625 ms (ignored for LE 2M, which is not scanned).
        public var scanInterval: UInt16 = 0
        /// In units of 0.625 ms (ignored for LE 2M).
        public var scanWindow: UInt16 = 0
        /// In units of 1.25 ms.
        public var connectionIntervalMin: UInt16 = 0
        /// In units of 1.25 ms.
        public var connectionIntervalMax: UInt16 = 0
        public var maxLatency: UInt16 = 0
        /// In units of 10 ms.
        public var supervisionTimeout: UInt16 = 0
        /// In units of 0.625 ms.
        public var minCELength: UInt16 = 0
        /// In units of 0.625 ms.
        public var maxCELength: UInt16 = 0

        public init() {}

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

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&scanInterval)
            try coder.uint16(&scanWindow)
            try coder.uint16(&connectionIntervalMin)
            try coder.uint16(&connectionIntervalMax)
            try coder.uint16(&maxLatency)
            try coder.uint16(&supervisionTimeout)
            try coder.uint16(&minCELength)
            try coder.uint16(&maxCELength)
        }
    }

    public var initiatorFilterPolicy: InitiatorFilterPolicy = .usePeerAddress
    public var ownAddressType: OwnAddressType = .public
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    public var le1M: PHYParameters?
    public var le2M: PHYParameters?
    public var leCoded: PHYParameters?

    public init() {}

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

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&initiatorFilterPolicy, field: "Initiator_Filter_Policy")
        try coder.uint8(&ownAddressType, field: "Own_Address_Type")
        try coder.uint8(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        var phys = initiatingPHYs
        try coder.uint8(&phys, field: "Initiating_PHYs")
        try coder.check(!phys.isEmpty && phys.isSubset(of: .all), field: "Initiating_PHYs", value: phys.rawValue)
        try coder.optional(&le1M, isPresent: phys.contains(.le1M))
        try coder.optional(&le2M, isPresent: phys.contains(.le2M))
        try coder.optional(&leCoded, isPresent: phys.contains(.leCoded))
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
public struct LEConnectionUpdateCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0013)
    public static let name = "LE Connection Update"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16 = 0
    /// In units of 1.25 ms.
    public var connectionIntervalMin: UInt16 = 0
    /// In units of 1.25 ms.
    public var connectionIntervalMax: UInt16 = 0
    public var maxLatency: UInt16 = 0
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16 = 0
    /// In units of 0.625 ms.
    public var minCELength: UInt16 = 0
    /// In units of 0.625 ms.
    public var maxCELength: UInt16 = 0

    public init() {}

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

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint16(&connectionIntervalMin)
        try coder.uint16(&connectionIntervalMax)
        try coder.uint16(&maxLatency)
        try coder.uint16(&supervisionTimeout)
        try coder.uint16(&minCELength)
        try coder.uint16(&maxCELength)
    }
}

/// LE Read Remote Features (Core 6.0, Vol 4, Part E, 7.8.21). Answered by Command Status;
/// LE Read Remote Features Complete follows.
public struct LEReadRemoteFeaturesCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0016)
    public static let name = "LE Read Remote Features"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
    }
}

/// LE Remote Connection Parameter Request Reply (Core 6.0, Vol 4, Part E, 7.8.31): accepts
/// the peer's request, with the parameters the host wants.
public struct LERemoteConnectionParameterRequestReplyCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0020)
    public static let name = "LE Remote Connection Parameter Request Reply"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16 = 0
    /// In units of 1.25 ms.
    public var intervalMin: UInt16 = 0
    /// In units of 1.25 ms.
    public var intervalMax: UInt16 = 0
    public var maxLatency: UInt16 = 0
    /// In units of 10 ms.
    public var timeout: UInt16 = 0
    /// In units of 0.625 ms.
    public var minCELength: UInt16 = 0
    /// In units of 0.625 ms.
    public var maxCELength: UInt16 = 0

    public init() {}

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

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint16(&intervalMin)
        try coder.uint16(&intervalMax)
        try coder.uint16(&maxLatency)
        try coder.uint16(&timeout)
        try coder.uint16(&minCELength)
        try coder.uint16(&maxCELength)
    }
}

/// LE Remote Connection Parameter Request Negative Reply (Core 6.0, Vol 4, Part E, 7.8.32):
/// rejects the peer's request, usually with Unacceptable Connection Parameters (0x3B).
public struct LERemoteConnectionParameterRequestNegativeReplyCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0021)
    public static let name = "LE Remote Connection Parameter Request Negative Reply"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16 = 0
    public var reason: HCIStatus = .success

    public init() {}

    public init(connectionHandle: UInt16, reason: HCIStatus = .unacceptableConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.status(&reason)
    }
}
