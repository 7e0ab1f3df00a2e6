import BluetoothCore

/// Disconnect (Core 6.0, Vol 4, Part E, 7.1.6). Answered by Command Status; Disconnection
/// Complete follows.
public struct DisconnectCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.linkControl, command: 0x0006)
    public static let name = "Disconnect"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16 = 0
    /// Usually Remote User Terminated Connection (0x13).
    public var reason: HCIStatus = .success

    public init() {}

    public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.status(&reason)
    }
}

/// Read Remote Version Information (Core 6.0, Vol 4, Part E, 7.1.23). Answered by Command
/// Status; Read Remote Version Information Complete follows.
public struct ReadRemoteVersionInformationCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.linkControl, command: 0x001D)
    public static let name = "Read Remote Version Information"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
    }
}
