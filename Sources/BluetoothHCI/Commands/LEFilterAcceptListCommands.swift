import BluetoothCore

/// LE Read Filter Accept List Size (Core 6.0, Vol 4, Part E, 7.8.14): how many devices the
/// controller's filter accept list holds.
public struct LEReadFilterAcceptListSizeCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000F)
    public static let name = "LE Read Filter Accept List Size"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var filterAcceptListSize: UInt8 = 0

        public init() {}

        public init(filterAcceptListSize: UInt8) { self.filterAcceptListSize = filterAcceptListSize }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&filterAcceptListSize)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
