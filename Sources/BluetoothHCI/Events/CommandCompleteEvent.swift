import BluetoothCore

/// Command Complete (Core 6.0, Vol 4, Part E, 7.7.14): the result of a command, and how many
/// more commands the controller accepts now.
public struct CommandCompleteEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x0E
    public static let name = "Command Complete"

    public var numberOfHCICommandPackets: UInt8 = 0
    public var opcode: HCIOpcode = HCIOpcode(rawValue: 0)
    /// The return parameters, starting with the Status octet (empty for the no-op opcode).
    public var returnParameters: [UInt8] = []

    public init() {}

    public init(numberOfHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numberOfHCICommandPackets = numberOfHCICommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&numberOfHCICommandPackets)
        try coder.uint16(&opcode, field: "Command_Opcode")
        try coder.rest(&returnParameters)
    }

    /// The Status octet; a missing one reads as Unspecified Error.
    public var status: HCIStatus {
        returnParameters.first.map(HCIStatus.init(rawValue:)) ?? .unspecifiedError
    }

    public var description: String { "Command Complete \(opcode) \(status) credits=\(numberOfHCICommandPackets)" }
}
