import BluetoothCore

/// Command Status (Core 6.0, Vol 4, Part E, 7.7.15): a command was accepted (or refused) and
/// its result will come in a later event.
public struct CommandStatusEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x0F
    public static let name = "Command Status"

    public var status: HCIStatus = .success
    public var numberOfHCICommandPackets: UInt8 = 0
    public var opcode: HCIOpcode = HCIOpcode(rawValue: 0)

    public init() {}

    public init(status: HCIStatus, numberOfHCICommandPackets: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numberOfHCICommandPackets = numberOfHCICommandPackets
        self.opcode = opcode
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.uint8(&numberOfHCICommandPackets)
        try coder.uint16(&opcode, field: "Command_Opcode")
        try coder.end()
    }

    public var description: String { "Command Status \(opcode) \(status) credits=\(numberOfHCICommandPackets)" }
}
