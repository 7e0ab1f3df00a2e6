import BluetoothCore

/// Read Local Version Information (Core 6.0, Vol 4, Part E, 7.4.1).
public struct ReadLocalVersionInformationCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.informational, command: 0x0001)
    public static let name = "Read Local Version Information"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var hciVersion: UInt8 = 0
        public var hciSubversion: UInt16 = 0
        public var lmpVersion: UInt8 = 0
        public var companyIdentifier: UInt16 = 0
        public var lmpSubversion: UInt16 = 0

        public init() {}

        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier
            self.lmpSubversion = lmpSubversion
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&hciVersion)
            try coder.uint16(&hciSubversion)
            try coder.uint8(&lmpVersion)
            try coder.uint16(&companyIdentifier)
            try coder.uint16(&lmpSubversion)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Read Local Supported Commands (Core 6.0, Vol 4, Part E, 7.4.2).
public struct ReadLocalSupportedCommandsCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.informational, command: 0x0002)
    public static let name = "Read Local Supported Commands"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var supportedCommands = SupportedCommands()

        public init() {}

        public init(supportedCommands: SupportedCommands) { self.supportedCommands = supportedCommands }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.fields(&supportedCommands)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Read Local Supported Features (Core 6.0, Vol 4, Part E, 7.4.3): the BR/EDR LMP features,
/// page 0 (Core 6.0, Vol 2, Part C, 3.3). Bit 38 is "LE Supported (Controller)".
public struct ReadLocalSupportedFeaturesCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.informational, command: 0x0003)
    public static let name = "Read Local Supported Features"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// The LMP_Features bit mask, octet 0 in the least significant byte.
        public var features: UInt64 = 0

        public init() {}

        public init(features: UInt64) { self.features = features }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint64(&features)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Read Buffer Size (Core 6.0, Vol 4, Part E, 7.4.5): the shared ACL buffers, used for LE too
/// when LE Read Buffer Size returns zero.
public struct ReadBufferSizeCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.informational, command: 0x0005)
    public static let name = "Read Buffer Size"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var aclDataPacketLength: UInt16 = 0
        public var synchronousDataPacketLength: UInt8 = 0
        public var totalNumACLDataPackets: UInt16 = 0
        public var totalNumSynchronousDataPackets: UInt16 = 0

        public init() {}

        public init(aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8, totalNumACLDataPackets: UInt16, totalNumSynchronousDataPackets: UInt16) {
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalNumACLDataPackets = totalNumACLDataPackets
            self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&aclDataPacketLength)
            try coder.uint8(&synchronousDataPacketLength)
            try coder.uint16(&totalNumACLDataPackets)
            try coder.uint16(&totalNumSynchronousDataPackets)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Read BD_ADDR (Core 6.0, Vol 4, Part E, 7.4.6): the controller's public address.
public struct ReadBDADDRCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.informational, command: 0x0009)
    public static let name = "Read BD_ADDR"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var address: BluetoothAddress = .zero

        public init() {}

        public init(address: BluetoothAddress) { self.address = address }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.address(&address)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
