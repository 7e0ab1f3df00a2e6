import BluetoothCore

/// Read RSSI (Core 6.0, Vol 4, Part E, 7.5.4): on LE, the received signal strength of the
/// connection in dBm.
public struct ReadRSSICommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.statusParameters, command: 0x0005)
    public static let name = "Read RSSI"

    public struct ReturnParameters: HCIReturnParameters {
        public static var leadsWithConnectionHandle: Bool { true }

        public var connectionHandle: UInt16
        /// dBm; 127 means not available.
        public var rssi: Int8

        public init(connectionHandle: UInt16, rssi: Int8) {
            self.connectionHandle = connectionHandle
            self.rssi = rssi
        }

        public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
            connectionHandle = try reader.readConnectionHandle()
            rssi = try reader.readInt8()
        }

        public func encodeReturnParameters(into writer: inout ByteWriter) {
            writer.writeConnectionHandle(connectionHandle)
            writer.write(rssi)
        }
    }

    public var connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
    }
}
