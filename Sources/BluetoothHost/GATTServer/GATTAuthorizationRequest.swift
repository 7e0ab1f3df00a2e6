import BluetoothCore

/// A client reads or writes an attribute whose permissions require authorization
/// (`AttributePermissions/readAuthorizationRequired`,
/// `AttributePermissions/writeAuthorizationRequired`): the server asks the application's
/// authorization handler (``GATTServer/setAuthorizationHandler(_:)``) before serving it.
public struct GATTAuthorizationRequest: Sendable, Hashable {
    /// Which direction the client asks for.
    public enum Access: String, Sendable, Hashable {
        case read
        case write
    }

    /// The connection of the client.
    public var connectionHandle: UInt16
    /// The client's address, when the bearer is a Host connection.
    public var peer: DeviceAddress?
    /// The handle of the attribute.
    public var handle: UInt16
    /// The attribute's type: the characteristic's UUID for a value, the descriptor's for a
    /// descriptor.
    public var uuid: BluetoothUUID
    public var access: Access

    public init(connectionHandle: UInt16, peer: DeviceAddress? = nil, handle: UInt16, uuid: BluetoothUUID, access: Access) {
        self.connectionHandle = connectionHandle
        self.peer = peer
        self.handle = handle
        self.uuid = uuid
        self.access = access
    }
}

/// Grants (`true`) or refuses a client's access to an attribute that requires authorization.
public typealias GATTAuthorizationHandler = @Sendable (GATTAuthorizationRequest) async -> Bool
