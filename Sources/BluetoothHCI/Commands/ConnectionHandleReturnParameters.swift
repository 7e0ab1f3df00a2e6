import BluetoothCore

/// Return parameters that are just the Connection_Handle the command acted on, shared by
/// LE Set Data Length, the LE Long Term Key Request replies and the LE Remote Connection
/// Parameter Request replies (Core 6.0, Vol 4, Part E, 7.8).
public struct HCIConnectionHandleReturnParameters: HCIReturnParameters {
    public static var leadsWithConnectionHandle: Bool { true }

    public var connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
    }

    public func encodeReturnParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
    }
}
