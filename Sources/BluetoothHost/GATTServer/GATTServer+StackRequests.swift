import BluetoothCore

/// Requests that another stack's ATT server took from a client, for a database this server
/// keeps: BlueZ's GATT server calling the application Bluejay exported to it
/// (`GattManager1.RegisterApplication`). The attribute's handlers and stored value answer, as
/// for a request on one of our own ATT bearers. That stack checked the link's security before
/// it asked (against the flags exported from ``accessPolicy(forHandle:)``); the application's
/// own checks (its authorization handler, the value's length) run here.
extension GATTServer {
    /// A client of another stack: its link there, named by the stack's own identifier for it.
    public struct StackClient: Sendable, Hashable {
        /// An identifier of the client's link that the stack gives (not an HCI handle).
        public var connectionHandle: UInt16
        /// The client's address, when the stack says it.
        public var peer: DeviceAddress?
        /// The ATT MTU of the client's link, when the stack says it.
        public var mtu: Int

        public init(connectionHandle: UInt16, peer: DeviceAddress?, mtu: Int = Int(ATTPDU.defaultLEMTU)) {
            self.connectionHandle = connectionHandle
            self.peer = peer
            self.mtu = mtu
        }
    }

    /// Reads the value at `handle` from `offset` for a client of another stack: the read
    /// handler's answer or the stored value, after the application's authorization.
    public func read(handle: UInt16, offset: Int, from client: StackClient) async -> GATTReadResponse {
        guard let attribute = database.attribute(at: handle) else { return .error(.invalidHandle) }
        switch await readValue(of: attribute, offset: offset, context(for: client)) {
        case let .error(code):
            return .error(code)
        case let .value(value):
            // The whole value, as a read handler answers it too (it is told the offset): cut here.
            guard offset <= value.count else { return .error(.invalidOffset) }
            return .value(Array(value[offset...]))
        }
    }

    /// Writes `value` at `handle` for a client of another stack: the write handler decides,
    /// the value is stored when accepted. `nil` on success, else the error to answer.
    public func write(_ value: [UInt8], handle: UInt16, kind: GATTWriteRequest.Kind, from client: StackClient) async -> ATTErrorCode? {
        guard let attribute = database.attribute(at: handle) else { return .invalidHandle }
        return await writeValue(value, to: attribute, kind: kind, context(for: client))
    }

    /// What reading and writing the attribute at `handle` needs, for a stack that serves this
    /// database and checks links itself; `nil` for no such attribute.
    public func accessPolicy(forHandle handle: UInt16) -> GATTAccessPolicy? {
        guard let attribute = database.attribute(at: handle) else { return nil }
        func requirement(_ requirement: AttributeSecurityRequirement) -> GATTAccessPolicy.Requirement {
            GATTAccessPolicy.Requirement(encryption: requirement.needsEncryption, authentication: requirement.authentication || requirement.secureConnections,
                                         secureConnections: requirement.secureConnections, authorization: requirement.authorization,
                                         minimumKeySize: requirement.minimumKeySize)
        }
        return GATTAccessPolicy(isReadable: attribute.permissions.allowsReading, isWritable: attribute.permissions.allowsWriting,
                                read: requirement(attribute.readRequirement), write: requirement(attribute.writeRequirement),
                                maximumLength: attribute.maximumLength)
    }

    private func context(for client: StackClient) -> RequestContext {
        RequestContext(clientID: 0, connectionHandle: client.connectionHandle, peer: client.peer, mtu: client.mtu,
                       security: LinkSecurity(), linkCheckedByStack: true)
    }
}

/// What reading and writing one attribute needs (its permissions, as `AttributePermissions`
/// and the characteristic's key size and Secure Connections settings declared them).
public struct GATTAccessPolicy: Sendable, Hashable {
    /// What one kind of access needs of the link and of the application.
    public struct Requirement: Sendable, Hashable {
        public var encryption: Bool
        public var authentication: Bool
        public var secureConnections: Bool
        public var authorization: Bool
        public var minimumKeySize: Int

        public init(encryption: Bool, authentication: Bool, secureConnections: Bool, authorization: Bool, minimumKeySize: Int) {
            self.encryption = encryption
            self.authentication = authentication
            self.secureConnections = secureConnections
            self.authorization = authorization
            self.minimumKeySize = minimumKeySize
        }
    }

    public var isReadable: Bool
    public var isWritable: Bool
    public var read: Requirement
    public var write: Requirement
    /// The longest value a client may write.
    public var maximumLength: Int

    public init(isReadable: Bool, isWritable: Bool, read: Requirement, write: Requirement, maximumLength: Int) {
        self.isReadable = isReadable
        self.isWritable = isWritable
        self.read = read
        self.write = write
        self.maximumLength = maximumLength
    }
}
