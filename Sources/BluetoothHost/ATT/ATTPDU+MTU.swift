import BluetoothCore

/// ATT_EXCHANGE_MTU_REQ (Core 6.0, Vol 3, Part F, 3.4.2.1): the client's receive MTU.
/// Both sides then use the smaller of the two MTUs, never less than the default 23.
public struct ATTExchangeMTURequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.exchangeMTURequest

    public var clientRxMTU: UInt16

    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        clientRxMTU = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(clientRxMTU) }

    public var description: String { "client Rx MTU \(clientRxMTU)" }
}

/// ATT_EXCHANGE_MTU_RSP (Core 6.0, Vol 3, Part F, 3.4.2.2): the server's receive MTU.
public struct ATTExchangeMTUResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.exchangeMTUResponse

    public var serverRxMTU: UInt16

    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        serverRxMTU = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(serverRxMTU) }

    public var description: String { "server Rx MTU \(serverRxMTU)" }
}
