import BluetoothCore

/// Disconnect (Core 6.0, Vol 4, Part E, 7.1.6). Answered by Command Status; Disconnection
/// Complete follows.
public struct DisconnectCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.linkControl, command: 0x0006)
    public static let name = "Disconnect"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16
    /// Usually Remote User Terminated Connection (0x13).
    public var reason: HCIStatus

    public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
        reason = try reader.readStatus()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
        writer.write(reason)
    }
}

/// Read Remote Version Information (Core 6.0, Vol 4, Part E, 7.1.23). Answered by Command
/// Status; Read Remote Version Information Complete follows.
public struct ReadRemoteVersionInformationCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.linkControl, command: 0x001D)
    public static let name = "Read Remote Version Information"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        connectionHandle = try reader.readConnectionHandle()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.writeConnectionHandle(connectionHandle)
    }
}
