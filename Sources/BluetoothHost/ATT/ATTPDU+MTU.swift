import BluetoothCore

/// ATT_EXCHANGE_MTU_REQ (Core 6.0, Vol 3, Part F, 3.4.2.1): the client's receive MTU.
/// Both sides then use the smaller of the two MTUs, never less than the default 23.
public struct ATTExchangeMTURequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.exchangeMTURequest

    public var clientRxMTU: UInt16 = 0

    public init() {}

    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&clientRxMTU)
        try coder.end()
    }

    public var description: String { "client Rx MTU \(clientRxMTU)" }
}

/// ATT_EXCHANGE_MTU_RSP (Core 6.0, Vol 3, Part F, 3.4.2.2): the server's receive MTU.
public struct ATTExchangeMTUResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.exchangeMTUResponse

    public var serverRxMTU: UInt16 = 0

    public init() {}

    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&serverRxMTU)
        try coder.end()
    }

    public var description: String { "server Rx MTU \(serverRxMTU)" }
}
