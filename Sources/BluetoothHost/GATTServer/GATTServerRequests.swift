import BluetoothCore

/// A client reads a characteristic value or descriptor whose definition has a read handler.
public struct GATTReadRequest: Sendable, Hashable {
    /// The connection of the client.
    public var connectionHandle: UInt16
    /// The client's address, when the bearer is a Host connection.
    public var peer: DeviceAddress?
    /// The handle of the attribute read.
    public var handle: UInt16
    /// The characteristic's UUID (for a descriptor, the descriptor's).
    public var uuid: BluetoothUUID
    /// Where the client starts reading (Read Blob); the server cuts the answer there, so the
    /// handler returns the whole value.
    public var offset: Int

    public init(connectionHandle: UInt16, peer: DeviceAddress? = nil, handle: UInt16, uuid: BluetoothUUID, offset: Int = 0) {
        self.connectionHandle = connectionHandle
        self.peer = peer
        self.handle = handle
        self.uuid = uuid
        self.offset = offset
    }
}

/// What a read handler answers: the whole value, or the ATT error to send.
public enum GATTReadResponse: Sendable, Hashable {
    case value([UInt8])
    case error(ATTErrorCode)
}

/// A client writes a characteristic value or descriptor whose definition has a write handler.
public struct GATTWriteRequest: Sendable, Hashable {
    /// How the value arrived (Core 6.0, Vol 3, Part F, 3.4.5 and 3.4.6).
    public enum Kind: String, Sendable, Hashable {
        /// A Write Request: the client waits for the answer.
        case request
        /// A Write Command: no answer is sent, whatever the handler says.
        case command
        /// A Signed Write Command whose signature was checked (or that came on an encrypted
        /// link): no answer is sent, whatever the handler says.
        case signedCommand
        /// A long or reliable write: prepared, then executed; `value` is the assembled value.
        case preparedWrite
    }

    public var connectionHandle: UInt16
    public var peer: DeviceAddress?
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public var value: [UInt8]
    public var kind: Kind

    public init(connectionHandle: UInt16, peer: DeviceAddress? = nil, handle: UInt16, uuid: BluetoothUUID, value: [UInt8], kind: Kind) {
        self.connectionHandle = connectionHandle
        self.peer = peer
        self.handle = handle
        self.uuid = uuid
        self.value = value
        self.kind = kind
    }
}

/// What a write handler answers. On ``success`` the server stores the written value, so a
/// later read returns it.
public enum GATTWriteResponse: Sendable, Hashable {
    case success
    case error(ATTErrorCode)
}

/// Answers reads of one attribute instead of its stored value.
public typealias GATTReadHandler = @Sendable (GATTReadRequest) async -> GATTReadResponse
/// Accepts or refuses writes of one attribute.
public typealias GATTWriteHandler = @Sendable (GATTWriteRequest) async -> GATTWriteResponse
