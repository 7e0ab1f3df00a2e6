import BluetoothCore

/// Command Status (Core 6.0, Vol 4, Part E, 7.7.15): a command was accepted (or refused) and
/// its result will come in a later event.
public struct CommandStatusEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x0F
    public static let name = "Command Status"

    public var status: HCIStatus
    public var numberOfHCICommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numberOfHCICommandPackets: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numberOfHCICommandPackets = numberOfHCICommandPackets
        self.opcode = opcode
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        numberOfHCICommandPackets = try reader.readUInt8()
        opcode = HCIOpcode(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status.rawValue)
        writer.write(numberOfHCICommandPackets)
        writer.write(opcode.rawValue)
    }

    public var description: String { "Command Status \(opcode) \(status) credits=\(numberOfHCICommandPackets)" }
}
