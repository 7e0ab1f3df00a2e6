import BluetoothCore

/// Robust caching on the server side (Core 6.0, Vol 3, Part G, 2.5.2.1): each client is
/// change-aware or change-unaware; a change-unaware client that enabled robust caching
/// (bit 0 of its Client Supported Features) gets Database Out Of Sync instead of an answer.
///
/// A bonded client's features and awareness outlast its connection, with its Client
/// Characteristic Configurations (GATTServer+BondedClients.swift): until its link is encrypted
/// with its bond's key, and on any other link, the client is a new one (change-aware, no
/// features).
extension GATTServer {
    /// The robust caching bit of Client Supported Features (Core 6.0, Vol 3, Part G, 7.2).
    static let robustCachingFeature: UInt8 = 0x01
    /// The features this server knows; other bits a client writes are not kept.
    static let supportedClientFeatures: UInt8 = 0x01

    enum CachingGate {
        case serve
        /// A change-unaware client's command: ignored.
        case ignore
        /// A change-unaware client's request: answered with Database Out Of Sync.
        case outOfSync
    }

    /// The Database Hash of this server's database now.
    public var databaseHash: GATTDatabaseHash { database.hash }

    /// Whether the client on that connection is change-aware (`nil` for an unknown connection).
    public func isChangeAware(connectionHandle: UInt16) -> Bool? { clients[connectionHandle]?.isChangeAware }

    /// The Client Supported Features the client on that connection wrote (`nil` for an unknown connection).
    public func clientSupportedFeatures(connectionHandle: UInt16) -> UInt8? { clients[connectionHandle]?.clientFeatures }

    /// Decides whether a request or command of this client is served (Core 6.0, Vol 3, Part G,
    /// 2.5.2.1): a change-unaware client with robust caching has its commands ignored and its
    /// first request refused with Database Out Of Sync; the request after that refusal, or a
    /// Read By Type of the Database Hash, makes it change-aware again.
    func cachingGate(_ pdu: ATTPDU, clientID: UInt64, connectionHandle: UInt16) -> CachingGate {
        guard var client = client(id: clientID, connectionHandle: connectionHandle), !client.isChangeAware,
              client.clientFeatures & Self.robustCachingFeature != 0 else { return .serve }
        if pdu.opcode.isCommand { return .ignore }
        // Exchange MTU names no attribute: nothing a change could make wrong.
        if case .exchangeMTURequest = pdu { return .serve }
        let readsHash: Bool
        if case let .readByTypeRequest(request) = pdu, request.attributeType == GATTAttributeType.databaseHash {
            readsHash = true
        } else {
            readsHash = false
        }
        guard readsHash || client.sentOutOfSync else {
            client.sentOutOfSync = true
            clients[connectionHandle] = client
            return .outOfSync
        }
        client.isChangeAware = true
        client.hasLearnedDatabase = true
        client.sentOutOfSync = false
        clients[connectionHandle] = client
        logger.debug("connection \(Hex.format(connectionHandle)) is change-aware again")
        return .serve
    }

    /// A read of the Database Hash, once served, makes the client change-aware.
    func didServeDatabaseHash(_ context: RequestContext) {
        guard var client = client(id: context.clientID, connectionHandle: context.connectionHandle) else { return }
        client.isChangeAware = true
        client.hasLearnedDatabase = true
        client.sentOutOfSync = false
        clients[context.connectionHandle] = client
    }

    /// The client's Client Supported Features, as it reads them.
    func clientFeatures(_ context: RequestContext) -> [UInt8] {
        [client(id: context.clientID, connectionHandle: context.connectionHandle)?.clientFeatures ?? 0]
    }

    /// A client writes its features: it may set bits, never clear one it set (Core 6.0,
    /// Vol 3, Part G, 7.2: Value Not Allowed).
    func writeClientFeatures(_ value: [UInt8], _ context: RequestContext) -> ATTErrorCode? {
        guard var client = client(id: context.clientID, connectionHandle: context.connectionHandle) else { return nil }
        let written = (value.first ?? 0) & Self.supportedClientFeatures
        guard written & client.clientFeatures == client.clientFeatures else { return .valueNotAllowed }
        client.clientFeatures = written
        clients[context.connectionHandle] = client
        logger.debug("connection \(Hex.format(context.connectionHandle)) supports features \(Hex.format(written))")
        keepBondedClientState(of: client)
        return nil
    }

    /// The database changed: every connected client is change-unaware until it learns of it
    /// (Core 6.0, Vol 3, Part G, 2.5.2.1).
    func databaseDidChange() {
        for (handle, client) in clients {
            var updated = client
            updated.isChangeAware = false
            updated.hasLearnedDatabase = false
            updated.sentOutOfSync = false
            clients[handle] = updated
        }
    }

    /// The client confirmed a Service Changed indication: it is change-aware.
    func didConfirmServiceChanged(connectionHandle: UInt16) {
        guard var client = clients[connectionHandle] else { return }
        client.isChangeAware = true
        client.hasLearnedDatabase = true
        client.sentOutOfSync = false
        clients[connectionHandle] = client
    }
}
