import BluetoothCore

/// Reset (Core 6.0, Vol 4, Part E, 7.3.2).
public struct ResetCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.controllerAndBaseband, command: 0x0003)
    public static let name = "Reset"
    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
