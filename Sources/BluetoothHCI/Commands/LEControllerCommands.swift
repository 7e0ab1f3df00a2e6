import BluetoothCore

/// LE Set Event Mask (Core 6.0, Vol 4, Part E, 7.8.1): which LE Meta subevents the controller
/// may send.
public struct LESetEventMaskCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0001)
    public static let name = "LE Set Event Mask"

    public var mask: LEEventMask = []

    public init() {}

    public init(mask: LEEventMask) { self.mask = mask }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint64(&mask, field: "LE_Event_Mask")
    }
}

/// LE Read Buffer Size [v1] (Core 6.0, Vol 4, Part E, 7.8.2): the LE ACL buffers. A length of
/// zero means LE shares the buffers of Read Buffer Size.
public struct LEReadBufferSizeCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0002)
    public static let name = "LE Read Buffer Size"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var leACLDataPacketLength: UInt16 = 0
        public var totalNumLEACLDataPackets: UInt8 = 0

        public init() {}

        public init(leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&leACLDataPacketLength)
            try coder.uint8(&totalNumLEACLDataPackets)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read Buffer Size [v2] (Core 6.0, Vol 4, Part E, 7.8.2): the LE ACL and ISO buffers.
public struct LEReadBufferSizeV2Command: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0060)
    public static let name = "LE Read Buffer Size [v2]"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var leACLDataPacketLength: UInt16 = 0
        public var totalNumLEACLDataPackets: UInt8 = 0
        public var isoDataPacketLength: UInt16 = 0
        public var totalNumISODataPackets: UInt8 = 0

        public init() {}

        public init(leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8, isoDataPacketLength: UInt16, totalNumISODataPackets: UInt8) {
            self.leACLDataPacketLength = leACLDataPacketLength
            self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
            self.isoDataPacketLength = isoDataPacketLength
            self.totalNumISODataPackets = totalNumISODataPackets
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&leACLDataPacketLength)
            try coder.uint8(&totalNumLEACLDataPackets)
            try coder.uint16(&isoDataPacketLength)
            try coder.uint8(&totalNumISODataPackets)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read Local Supported Features (Core 6.0, Vol 4, Part E, 7.8.3): page 0 of the
/// controller's LE features.
public struct LEReadLocalSupportedFeaturesCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0003)
    public static let name = "LE Read Local Supported Features"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var features: LEFeatures = []

        public init() {}

        public init(features: LEFeatures) { self.features = features }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint64(&features, field: "LE_Features")
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Set Random Address (Core 6.0, Vol 4, Part E, 7.8.4): the random address used when the
/// own address type is random.
public struct LESetRandomAddressCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0005)
    public static let name = "LE Set Random Address"

    public var address: BluetoothAddress = .zero

    public init() {}

    public init(address: BluetoothAddress) { self.address = address }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.address(&address)
    }
}
