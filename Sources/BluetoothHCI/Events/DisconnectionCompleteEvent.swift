import BluetoothCore

/// Disconnection Complete (Core 6.0, Vol 4, Part E, 7.7.5).
public struct DisconnectionCompleteEvent: HCIEventParameters, PacketFields, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x05
    public static let name = "Disconnection Complete"

    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    public var reason = HCIStatus.success

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, reason: HCIStatus) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.status(&reason)
        try coder.end()
    }

    public var description: String { "Disconnection Complete handle=\(Hex.format(connectionHandle)) status=\(status) reason=\(reason)" }
}
