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
