import BluetoothCore

/// Return parameters that are just the Connection_Handle the command acted on, shared by
/// LE Set Data Length, the LE Long Term Key Request replies and the LE Remote Connection
/// Parameter Request replies (Core 6.0, Vol 4, Part E, 7.8).
public struct HCIConnectionHandleReturnParameters: HCIReturnParameters, PacketFields {
    public static var leadsWithConnectionHandle: Bool { true }

    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
    }
}
