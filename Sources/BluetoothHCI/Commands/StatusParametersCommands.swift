import BluetoothCore

/// Read RSSI (Core 6.0, Vol 4, Part E, 7.5.4): on LE, the received signal strength of the
/// connection in dBm.
public struct ReadRSSICommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.statusParameters, command: 0x0005)
    public static let name = "Read RSSI"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public static var leadsWithConnectionHandle: Bool { true }

        public var connectionHandle: UInt16 = 0
        /// dBm; 127 means not available.
        public var rssi: Int8 = 0

        public init() {}

        public init(connectionHandle: UInt16, rssi: Int8) {
            self.connectionHandle = connectionHandle
            self.rssi = rssi
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.connectionHandle(&connectionHandle)
            try coder.int8(&rssi)
        }
    }

    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
    }
}
