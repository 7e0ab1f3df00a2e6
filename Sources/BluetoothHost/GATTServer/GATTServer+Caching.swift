import BluetoothCore

/// Robust caching on the server side (Core 6.0, Vol 3, Part G, 2.5.2.1): each client is
/// change-aware or change-unaware; a change-unaware client that enabled robust caching
/// (bit 0 of its Client Supported Features) gets Database Out Of Sync instead of an answer.
///
/// A bonded client's features and awareness outlast its connection. They are kept under the
/// bond's identity (``LinkSecurity/bondIdentity``), never the address a peer connects from,
/// which anyone may use: a link takes them up with its first PDU once encrypted with the bond's
/// key, and leaves them when it closes still encrypted with it (``GATTClientStateStorage``).
/// Until then, and on any other link, the client is a new one (change-aware, no features).
extension GATTServer {
    /// The robust caching bit of Client Supported Features (Core 6.0, Vol 3, Part G, 7.2).
    static let robustCachingFeature: UInt8 = 0x01
    /// The features this server knows; other bits a client writes are not kept.
    static let supportedClientFeatures: UInt8 = 0x01
    /// The bonded clients whose features and awareness are kept in memory across connections.
    static let maximumRememberedClients = 256

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
    public func isChangeAware(connectionHandle: UInt16) -> Bool? { bearers[connectionHandle]?.isChangeAware }

    /// The Client Supported Features the client on that connection wrote (`nil` for an unknown connection).
    public func clientSupportedFeatures(connectionHandle: UInt16) -> UInt8? { bearers[connectionHandle]?.clientFeatures }

    /// Decides whether a request or command of this client is served (Core 6.0, Vol 3, Part G,
    /// 2.5.2.1): a change-unaware client with robust caching has its commands ignored and its
    /// first request refused with Database Out Of Sync; the request after that refusal, or a
    /// Read By Type of the Database Hash, makes it change-aware again.
    func cachingGate(_ pdu: ATTPDU, bearerID: UInt64, connectionHandle: UInt16) -> CachingGate {
        guard var bearer = bearer(id: bearerID, connectionHandle: connectionHandle), !bearer.isChangeAware,
              bearer.clientFeatures & Self.robustCachingFeature != 0 else { return .serve }
        if pdu.opcode.isCommand { return .ignore }
        // Exchange MTU names no attribute: nothing a change could make wrong.
        if case .exchangeMTURequest = pdu { return .serve }
        let readsHash: Bool
        if case let .readByTypeRequest(request) = pdu, request.attributeType == GATTAttributeType.databaseHash {
            readsHash = true
        } else {
            readsHash = false
        }
        guard readsHash || bearer.sentOutOfSync else {
            bearer.sentOutOfSync = true
            bearers[connectionHandle] = bearer
            return .outOfSync
        }
        bearer.isChangeAware = true
        bearer.hasLearnedDatabase = true
        bearer.sentOutOfSync = false
        bearers[connectionHandle] = bearer
        logger.debug("connection \(Hex.format(connectionHandle)) is change-aware again")
        return .serve
    }

    /// A read of the Database Hash, once served, makes the client change-aware.
    func didServeDatabaseHash(_ context: RequestContext) {
        guard var bearer = bearer(id: context.bearerID, connectionHandle: context.connectionHandle) else { return }
        bearer.isChangeAware = true
        bearer.hasLearnedDatabase = true
        bearer.sentOutOfSync = false
        bearers[context.connectionHandle] = bearer
    }

    /// The client's Client Supported Features, as it reads them.
    func clientFeatures(_ context: RequestContext) -> [UInt8] {
        [bearer(id: context.bearerID, connectionHandle: context.connectionHandle)?.clientFeatures ?? 0]
    }

    /// A client writes its features: it may set bits, never clear one it set (Core 6.0,
    /// Vol 3, Part G, 7.2: Value Not Allowed).
    func writeClientFeatures(_ value: [UInt8], _ context: RequestContext) -> ATTErrorCode? {
        guard var bearer = bearer(id: context.bearerID, connectionHandle: context.connectionHandle) else { return nil }
        let written = (value.first ?? 0) & Self.supportedClientFeatures
        guard written & bearer.clientFeatures == bearer.clientFeatures else { return .valueNotAllowed }
        bearer.clientFeatures = written
        bearers[context.connectionHandle] = bearer
        logger.debug("connection \(Hex.format(context.connectionHandle)) supports features \(Hex.format(written))")
        return nil
    }

    /// The database changed: every connected client is change-unaware until it learns of it
    /// (Core 6.0, Vol 3, Part G, 2.5.2.1).
    func databaseDidChange() {
        for (handle, bearer) in bearers {
            var updated = bearer
            updated.isChangeAware = false
            updated.hasLearnedDatabase = false
            updated.sentOutOfSync = false
            bearers[handle] = updated
        }
    }

    /// The client confirmed a Service Changed indication: it is change-aware.
    func didConfirmServiceChanged(connectionHandle: UInt16) {
        guard var bearer = bearers[connectionHandle] else { return }
        bearer.isChangeAware = true
        bearer.hasLearnedDatabase = true
        bearer.sentOutOfSync = false
        bearers[connectionHandle] = bearer
    }

    /// Sets where bonded clients' state is kept between runs (the host keeps it with the bond);
    /// without it the server keeps it in memory only.
    public func setClientStateStorage(_ storage: GATTClientStateStorage?) {
        clientStateStorage = storage
    }

    /// A PDU came on a link encrypted with the key of the bond with `identity`: the client is
    /// that bond's peer, and takes up what it left last time. Its features add to those it
    /// wrote on this link; it stays change-aware only if the database is the one it knew, or
    /// it learned the database on this link since (read the hash, confirmed Service Changed).
    func adoptBondIdentity(_ identity: DeviceAddress, bearerID: UInt64, connectionHandle: UInt16) async {
        var remembered = rememberedClients[identity]
        if remembered == nil, let storage = clientStateStorage { remembered = await storage.load(identity) }
        guard var bearer = bearer(id: bearerID, connectionHandle: connectionHandle), bearer.cachingIdentity != identity else { return }
        bearer.cachingIdentity = identity
        if let remembered {
            bearer.clientFeatures |= remembered.supportedFeatures & Self.supportedClientFeatures
            bearer.isChangeAware = bearer.isChangeAware && (bearer.hasLearnedDatabase || remembered.knownDatabaseHash == database.hash)
            logger.debug("""
                connection \(Hex.format(connectionHandle)) is bonded client \(identity): features \(Hex.format(bearer.clientFeatures)), \
                change-aware \(bearer.isChangeAware)
                """)
        }
        bearers[connectionHandle] = bearer
    }

    /// A client's bearer closes: if its link is still encrypted with a bond's key, keep its
    /// features and awareness under the bond's identity for its next connection.
    func rememberCachingState(of bearer: ServerBearer) {
        guard let identity = currentSecurity(of: bearer).bondIdentity else { return }
        let state = GATTClientCachingState(supportedFeatures: bearer.clientFeatures, knownDatabaseHash: bearer.isChangeAware ? database.hash : nil)
        if rememberedClients[identity] == nil, rememberedClients.count >= Self.maximumRememberedClients,
           let oldest = rememberedClients.keys.first {
            rememberedClients[oldest] = nil
        }
        rememberedClients[identity] = state
        guard let storage = clientStateStorage else { return }
        // In order: a later connection's state is never overwritten by an earlier one's.
        let previous = pendingClientStateSave
        pendingClientStateSave = Task {
            await previous?.value
            await storage.save(identity, state)
        }
    }

    /// Forgets what a bonded client left behind (its bond is gone; the host also removes what
    /// it stored with the bond).
    public func forgetClient(_ identity: DeviceAddress) {
        rememberedClients[DeviceAddress(identity.address, type: identity.type.base)] = nil
    }
}
