import BluetoothCore

/// Command Complete (Core 6.0, Vol 4, Part E, 7.7.14): the result of a command, and how many
/// more commands the controller accepts now.
public struct CommandCompleteEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x0E
    public static let name = "Command Complete"

    public var numberOfHCICommandPackets: UInt8
    public var opcode: HCIOpcode
    /// The return parameters, starting with the Status octet (empty for the no-op opcode).
    public var returnParameters: [UInt8]

    public init(numberOfHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numberOfHCICommandPackets = numberOfHCICommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        numberOfHCICommandPackets = try reader.readUInt8()
        opcode = HCIOpcode(rawValue: try reader.readUInt16())
        returnParameters = reader.readRemaining()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(numberOfHCICommandPackets)
        writer.write(opcode.rawValue)
        writer.write(contentsOf: returnParameters)
    }

    /// The Status octet; a missing one reads as Unspecified Error.
    public var status: HCIStatus {
        returnParameters.first.map(HCIStatus.init(rawValue:)) ?? .unspecifiedError
    }

    public var description: String { "Command Complete \(opcode) \(status) credits=\(numberOfHCICommandPackets)" }
}
