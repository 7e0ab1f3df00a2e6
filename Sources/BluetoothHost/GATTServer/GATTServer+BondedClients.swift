import BluetoothCore

/// What the server keeps of a bonded client between its connections: its Client
/// Characteristic Configurations (Core 6.0, Vol 3, Part G, 3.3.3.3: persistent across connections
/// for bonded devices), its Client Supported Features and the database it knew (robust caching,
/// Part G, 2.5.2.1), all in one ``GATTBondedClientState``; and what it missed while away.
///
/// Kept under the bond's identity (``LinkSecurity/bondIdentity``), never the address a peer
/// connects from, which anyone may use. A link takes the state up once it is encrypted with the
/// bond's key (the host tells the server as the controller reports it, in order with the
/// link's PDUs; a bonding pairing on the link counts too), and until then it is a new client: no
/// configurations, change-aware, no features. So a peer that uses a bonded client's address
/// without its keys gets nothing and, since only a link that took the state up stores it,
/// overwrites nothing. The state is stored (``GATTClientStateStorage``, the host's bond store)
/// whenever it changes on such a link and when the link ends, and goes when the bond goes
/// (``forgetClient(_:)``).
///
/// When the client comes back it finds its subscriptions (announced as restored
/// ``GATTSubscription``s), then, in this order: a Service Changed indication if the database
/// changed while it was away and it had enabled them (Part G, 7.1), the indications of values
/// updated while it was away (at most ``GATTServerSettings/maximumDeferredIndications``, the
/// oldest dropped and counted), and a notification of the latest value of each characteristic
/// updated meanwhile that asks for it (``GATTCharacteristicDefinition/notifiesLatestValueOnReconnection``).
extension GATTServer {
    /// The bonded clients whose state the server holds in memory (their bonds keep it too).
    static let maximumRememberedClients = 256

    /// Sets where bonded clients' state is kept between runs (the host keeps it with the bond);
    /// without it the server keeps it in memory only.
    public func setClientStateStorage(_ storage: GATTClientStateStorage?) {
        clientStateStorage = storage
    }

    /// Bonded clients' states as stored (the host reads them from its bonds at power-on), so
    /// that a value updated before such a client first comes back is kept for it. A client
    /// already in memory keeps what it has.
    public func preloadBondedClients(_ states: [DeviceAddress: GATTBondedClientState]) {
        for (identity, state) in states.sorted(by: { $0.key.address.rawValue < $1.key.address.rawValue }) {
            bondedClients.preload(DeviceAddress(identity.address, type: identity.type.base), state: state)
        }
    }

    /// The state the server holds for a bonded client (`nil` when it holds none in memory).
    public func bondedClientState(of identity: DeviceAddress) -> GATTBondedClientState? {
        bondedClients.state(of: DeviceAddress(identity.address, type: identity.type.base))
    }

    /// Deferred indications dropped so far: the oldest of an away client's past
    /// ``GATTServerSettings/maximumDeferredIndications``, those of a client forgotten to make
    /// room, and those the connection's indication queue had no room for on its return.
    public nonisolated var droppedDeferredIndicationCount: Int { deferredIndicationDrops.withLock { $0 } }

    /// Forgets what a bonded client left behind and what waited for it (its bond is gone or was
    /// replaced; the host also removes what it stored with the bond). A link that had taken up
    /// its state keeps its configurations for as long as it lasts, but stores nothing more.
    public func forgetClient(_ identity: DeviceAddress) {
        let identity = DeviceAddress(identity.address, type: identity.type.base)
        bondedClients.forget(identity)
        for (handle, client) in clients where client.cachingIdentity == identity {
            var updated = client
            updated.cachingIdentity = nil
            clients[handle] = updated
        }
    }

    // MARK: Encryption

    /// The link is now encrypted with a stored bond's key, or its bonding pairing stored the
    /// bond (``LinkSecurity/bondIdentity``): the client takes up that bond's state, in order with
    /// the link's PDUs. The host calls it on the transport's reader thread as it applies
    /// Encryption Change to the bearer, and when a pairing's bond is stored.
    ///
    /// The client is taken up now, even before it sends anything: it may send nothing before
    /// it expects its notifications.
    nonisolated func linkEncrypted(_ bearer: ATTBearer) {
        let security = bearer.security
        guard security.bondIdentity != nil else { return }
        queue(.encrypted(security), on: ServerLink(bearer), limit: inboundLimit.limit)
    }

    /// In the client's order: takes up the bond's state unless the link already holds it.
    func linkDidEncrypt(_ security: LinkSecurity, clientID: UInt64, connectionHandle: UInt16) async {
        guard let identity = security.bondIdentity, let current = client(id: clientID, connectionHandle: connectionHandle),
              current.cachingIdentity != identity else { return }
        await adoptBondIdentity(identity, clientID: clientID, connectionHandle: connectionHandle)
    }

    /// The link is encrypted with the key of the bond with `identity`: the client is that bond's
    /// peer and takes up what it left. Its features add to those it wrote on this link; it stays
    /// change-aware only if the database is the one it knew, or it learned the database on this
    /// link since (read the hash, confirmed Service Changed); its configurations come back where
    /// it wrote none on this link. Then it gets what it missed.
    func adoptBondIdentity(_ identity: DeviceAddress, clientID: UInt64, connectionHandle: UInt16) async {
        var loaded: GATTBondedClientState?
        if !bondedClients.knows(identity), let storage = clientStateStorage { loaded = await storage.load(identity) }
        guard var client = client(id: clientID, connectionHandle: connectionHandle), client.cachingIdentity != identity else { return }
        if let previous = client.cachingIdentity { bondedClients.leave(previous, state: nil) }
        let arrival = bondedClients.arrive(identity, loaded: loaded)
        noteDeferredDrops()
        client.cachingIdentity = identity
        var restored: [(UInt16, ClientCharacteristicConfiguration)] = []
        if let remembered = arrival.state {
            client.clientFeatures |= remembered.supportedFeatures & Self.supportedClientFeatures
            client.isChangeAware = client.isChangeAware && (client.hasLearnedDatabase || remembered.knownDatabaseHash == database.hash)
            restored = restore(remembered.subscriptions, into: &client)
            logger.debug("""
                connection \(Hex.format(connectionHandle)) is bonded client \(identity): features \(Hex.format(client.clientFeatures)), \
                change-aware \(client.isChangeAware), \(restored.count) configurations restored
                """)
        }
        clients[connectionHandle] = client
        for (valueHandle, configuration) in restored {
            broadcast(.subscriptionChanged(subscription(client, valueHandle: valueHandle, configuration: configuration, isRestored: true)))
        }
        // What the link wrote before it was encrypted is the bond's now.
        keepBondedClientState(of: client)
        deliverMissed(arrival, to: client)
    }

    /// The stored configurations that still fit this database, put on the client where the
    /// link wrote none of its own: a characteristic of the same UUID at the same handle, only
    /// the bits its properties allow.
    private func restore(_ subscriptions: [GATTStoredSubscription], into client: inout ConnectedClient) -> [(UInt16, ClientCharacteristicConfiguration)] {
        var restored: [(UInt16, ClientCharacteristicConfiguration)] = []
        for stored in subscriptions where !client.configuredOnLink.contains(stored.valueHandle) {
            guard let attribute = database.attribute(at: stored.valueHandle), attribute.type == stored.characteristicUUID,
                  case let .value(properties) = attribute.kind else { continue }
            var allowed: ClientCharacteristicConfiguration = []
            if properties.contains(.notify) { allowed.insert(.notification) }
            if properties.contains(.indicate) { allowed.insert(.indication) }
            let configuration = stored.configuration.intersection(allowed)
            guard !configuration.isEmpty, client.configurations[stored.valueHandle] != configuration else { continue }
            client.configurations[stored.valueHandle] = configuration
            restored.append((stored.valueHandle, configuration))
        }
        return restored
    }

    /// What a returning client missed: Service Changed when the database changed meanwhile
    /// (Core 6.0, Vol 3, Part G, 7.1, with the whole handle range), the deferred indications, and
    /// the latest value of each characteristic updated meanwhile that notifies it on return.
    /// Each is checked against the link's security as it leaves, like any push.
    private func deliverMissed(_ arrival: BondedClientRegistry.Arrival, to client: ConnectedClient) {
        let connectionHandle = client.connectionHandle
        let mtu = Int(mtu(of: client))
        var dropped = 0
        if !client.isChangeAware, client.configurations[AttributeDatabase.serviceChangedHandle]?.contains(.indication) == true {
            var writer = ByteWriter(capacity: 4)
            writer.write(UInt16(0x0001))
            writer.write(UInt16(0xFFFF))
            if enqueueIndication(writer.bytes, valueHandle: AttributeDatabase.serviceChangedHandle, connectionHandle: connectionHandle,
                                 ticket: nil) != .sent {
                logger.warning("could not indicate Service Changed to returning connection \(Hex.format(connectionHandle))")
            }
        }
        for deferred in arrival.deferredIndications {
            // Only what the client still asks to be indicated, of a value still there.
            guard client.configurations[deferred.handle]?.contains(.indication) == true,
                  database.attribute(at: deferred.handle) != nil else { continue }
            if enqueueIndication(Array(deferred.value.prefix(mtu - 3)), valueHandle: deferred.handle, connectionHandle: connectionHandle,
                                 ticket: nil) != .sent {
                dropped += 1
            }
        }
        for handle in arrival.updatedWhileAway.sorted() {
            guard let configuration = client.configurations[handle], configuration.contains(.notification), !configuration.contains(.indication),
                  let attribute = database.attribute(at: handle), attribute.notifiesLatestValueOnReconnection else { continue }
            if let refusal = attribute.readRequirement.shortfall(on: currentSecurity(of: client)) {
                logger.debug("latest \(attribute.type) not notified to returning connection \(Hex.format(connectionHandle)): \(refusal)")
                continue
            }
            _ = sendNotification(attribute.value, valueHandle: handle, connectionHandle: connectionHandle)
        }
        if dropped > 0 {
            logger.warning("connection \(Hex.format(connectionHandle)) had no room for \(dropped) indications kept while it was away")
            deferredIndicationDrops.withLock { $0 += dropped }
        }
    }

    // MARK: Keeping the state

    /// The client's state as its bond keeps it: features, the database it knows, configurations.
    func bondedState(of client: ConnectedClient) -> GATTBondedClientState {
        let subscriptions = client.configurations.keys.sorted().compactMap { handle -> GATTStoredSubscription? in
            guard let configuration = client.configurations[handle], !configuration.isEmpty,
                  let attribute = database.attribute(at: handle) else { return nil }
            return GATTStoredSubscription(valueHandle: handle, characteristicUUID: attribute.type, configuration: configuration)
        }
        return GATTBondedClientState(supportedFeatures: client.clientFeatures, knownDatabaseHash: client.isChangeAware ? database.hash : nil,
                                     subscriptions: subscriptions)
    }

    /// A link that holds a bonded client's state changed it (configurations, features): kept,
    /// and stored, while the link is still encrypted with the bond's key.
    func keepBondedClientState(of client: ConnectedClient) {
        guard let identity = client.cachingIdentity, currentSecurity(of: client).bondIdentity == identity else { return }
        let state = bondedState(of: client)
        guard bondedClients.state(of: identity) != state else { return }
        bondedClients.update(identity, state: state)
        store(state, of: identity)
    }

    /// A client's link closes: if its link took up a bond's state and is still encrypted with
    /// that bond's key, what it leaves is kept for its next connection.
    func leaveBondIdentity(of client: ConnectedClient) {
        guard let identity = client.cachingIdentity else { return }
        let state = currentSecurity(of: client).bondIdentity == identity ? bondedState(of: client) : nil
        let previous = bondedClients.state(of: identity)
        bondedClients.leave(identity, state: state)
        if let state, state != previous { store(state, of: identity) }
    }

    private func store(_ state: GATTBondedClientState, of identity: DeviceAddress) {
        guard let storage = clientStateStorage else { return }
        // In order: a later state is never overwritten by an earlier one.
        let previous = pendingClientStateSave
        pendingClientStateSave = Task {
            await previous?.value
            await storage.save(identity, state)
        }
    }

    /// Characteristics removed from the database: nothing kept for them is restored or sent.
    func forgetBondedClientHandles(in range: ClosedRange<UInt16>) {
        bondedClients.removeHandles(in: range)
    }

    /// A value changed while bonded subscribers were away: what each gets on its return.
    func deferForAbsentClients(_ value: [UInt8], _ attribute: ServerAttribute) -> [DeviceAddress] {
        let concerned = bondedClients.valueChanged(value, handle: attribute.handle,
                                                   notifiesLatestValueOnReconnection: attribute.notifiesLatestValueOnReconnection,
                                                   maximumDeferredIndications: settings.maximumDeferredIndications)
        if !concerned.isEmpty { noteDeferredDrops() }
        return concerned
    }

    /// Adds the registry's drops to the readable count.
    private func noteDeferredDrops() {
        let dropped = bondedClients.takeDrops()
        guard dropped > 0 else { return }
        let first = deferredIndicationDrops.withLock { count in
            defer { count += dropped }
            return count == 0
        }
        if first {
            logger.warning("an away bonded client has more than \(settings.maximumDeferredIndications) indications waiting: dropping the oldest (counted in droppedDeferredIndicationCount)")
        }
    }
}
