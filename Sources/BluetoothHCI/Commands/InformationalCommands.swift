import BluetoothCore

/// Read Local Version Information (Core 6.0, Vol 4, Part E, 7.4.1).
public struct ReadLocalVersionInformationCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.informational, command: 0x0001)
    public static let name = "Read Local Version Information"

    public struct ReturnParameters: HCIReturnParameters {
        public var hciVersion: UInt8
        public var hciSubversion: UInt16
        public var lmpVersion: UInt8
        public var companyIdentifier: UInt16
        public var lmpSubversion: UInt16

        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier
            self.lmpSubversion = lmpSubversion
        }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            hciVersion = try reader.readUInt8()
            hciSubversion = try reader.readUInt16()
            lmpVersion = try reader.readUInt8()
            companyIdentifier = try reader.readUInt16()
            lmpSubversion = try reader.readUInt16()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(hciVersion)
            writer.write(hciSubversion)
            writer.write(lmpVersion)
            writer.write(companyIdentifier)
            writer.write(lmpSubversion)
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

    public struct ReturnParameters: HCIReturnParameters {
        public var supportedCommands: SupportedCommands

        public init(supportedCommands: SupportedCommands) { self.supportedCommands = supportedCommands }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            supportedCommands = try SupportedCommands(reading: &reader)
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            supportedCommands.write(to: &writer)
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

    public struct ReturnParameters: HCIReturnParameters {
        /// The LMP_Features bit mask, octet 0 in the least significant byte.
        public var features: UInt64

        public init(features: UInt64) { self.features = features }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            features = try reader.readUInt64()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(features)
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

    public struct ReturnParameters: HCIReturnParameters {
        public var aclDataPacketLength: UInt16
        public var synchronousDataPacketLength: UInt8
        public var totalNumACLDataPackets: UInt16
        public var totalNumSynchronousDataPackets: UInt16

        public init(aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8, totalNumACLDataPackets: UInt16, totalNumSynchronousDataPackets: UInt16) {
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalNumACLDataPackets = totalNumACLDataPackets
            self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
        }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            aclDataPacketLength = try reader.readUInt16()
            synchronousDataPacketLength = try reader.readUInt8()
            totalNumACLDataPackets = try reader.readUInt16()
            totalNumSynchronousDataPackets = try reader.readUInt16()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(aclDataPacketLength)
            writer.write(synchronousDataPacketLength)
            writer.write(totalNumACLDataPackets)
            writer.write(totalNumSynchronousDataPackets)
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

    public struct ReturnParameters: HCIReturnParameters {
        public var address: BluetoothAddress

        public init(address: BluetoothAddress) { self.address = address }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            address = try reader.readAddress()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.write(address)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
