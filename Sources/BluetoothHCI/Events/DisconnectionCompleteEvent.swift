import BluetoothCore

/// Disconnection Complete (Core 6.0, Vol 4, Part E, 7.7.5).
public struct DisconnectionCompleteEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x05
    public static let name = "Disconnection Complete"

    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var reason: HCIStatus

    public init(status: HCIStatus = .success, connectionHandle: UInt16, reason: HCIStatus) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        connectionHandle = try reader.readUInt16() & 0x0FFF
        reason = HCIStatus(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status.rawValue)
        writer.write(connectionHandle)
        writer.write(reason.rawValue)
    }

    public var description: String { "Disconnection Complete handle=\(Hex.format(connectionHandle)) status=\(status) reason=\(reason)" }
}
