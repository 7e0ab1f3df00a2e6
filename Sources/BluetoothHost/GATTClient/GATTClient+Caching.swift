import BluetoothCore

/// The client's side of GATT caching (Core 6.0, Vol 3, Part G, 2.5.2): a database known to
/// be the peer's answers discovery without a PDU; the Database Hash tells whether a cached
/// one still is; Service Changed and Database Out Of Sync make it stale.
extension GATTClient {
    /// The whole database this client knows to be the peer's, if any: set by
    /// ``useKnownDatabase(_:)`` (a cache whose hash matched) or after ``discoverDatabase()``.
    public var knownDatabase: [GATTDiscoveredService]? { state.withLock { $0.knownDatabase } }

    /// Takes `database` as the peer's whole database: discovery is answered from it, without
    /// a PDU, until Service Changed or Database Out Of Sync says it is stale.
    public func useKnownDatabase(_ database: [GATTDiscoveredService]) {
        state.withLock { state in
            state.knownDatabase = database
            for service in database.map(\.service) where !state.discoveredServices.contains(service) {
                state.discoveredServices.append(service)
            }
        }
    }

    /// `handler` runs (on any thread) each time the known database turns out stale.
    public func onDatabaseStale(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.databaseStaleHandler = handler }
    }

    /// Forgets the known database and what was discovered; tells the stale handler.
    func databaseWentStale(because reason: String) {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            state.knownDatabase = nil
            state.discoveredServices.removeAll()
            return state.databaseStaleHandler
        }
        logger.info("cached database of \(bearer.peer) is stale: \(reason)")
        handler?()
    }

    /// Reads the peer's Database Hash with Read By Type over the whole database (Core 6.0,
    /// Vol 3, Part G, 7.3; a change-unaware client may always do this, 2.5.2.1). `nil` when the
    /// peer has no Database Hash characteristic (or hides it).
    public func readDatabaseHash() async throws -> GATTDatabaseHash? {
        let entries: [ATTReadByTypeResponse.AttributeData]
        do {
            entries = try await readByType(GATTAttributeType.databaseHash, in: 0x0001...0xFFFF, stopAfterFirstPage: true)
        } catch HostError.att(let error) where Self.hidingCodes.contains(error.code) {
            return nil
        }
        guard let first = entries.first else { return nil }
        guard let hash = GATTDatabaseHash(bytes: first.value) else {
            throw HostError.protocolViolation("Database Hash of \(first.value.count) octets, not 16")
        }
        return hash
    }

    /// The answers of a peer that keeps its Database Hash from this client.
    static let hidingCodes: Set<ATTErrorCode> = [.readNotPermitted, .insufficientAuthentication, .insufficientEncryption,
                                                 .insufficientAuthorization, .encryptionKeySizeTooShort]

    /// Sets the robust caching bit of the peer's Client Supported Features (Core 6.0, Vol 3,
    /// Part G, 7.2), keeping the bits already set (a client never clears one). Returns
    /// `false` when the peer has no such characteristic.
    @discardableResult
    public func enableRobustCaching() async throws -> Bool {
        let entries = try await readByType(GATTAttributeType.clientSupportedFeatures, in: 0x0001...0xFFFF, stopAfterFirstPage: true)
        guard let first = entries.first else { return false }
        let current = first.value.first ?? 0
        guard current & 0x01 == 0 else { return true }
        var value = Array(first.value)
        if value.isEmpty { value = [0] }
        value[0] |= 0x01
        try await writeValue(value, handle: first.handle)
        return true
    }

    // MARK: Answers from the known database

    func knownServices(uuid: BluetoothUUID?) -> [GATTService]? {
        state.withLock { state in
            state.knownDatabase.map { database in
                database.map(\.service).filter { $0.isPrimary && (uuid == nil || $0.uuid == uuid) }
            }
        }
    }

    func known(_ service: GATTService) -> GATTDiscoveredService? {
        state.withLock { $0.knownDatabase?.first { $0.service.handleRange == service.handleRange } }
    }

    func known(_ characteristic: GATTCharacteristic) -> GATTDiscoveredCharacteristic? {
        state.withLock { state in
            guard let database = state.knownDatabase else { return nil }
            for service in database where service.service.handleRange.contains(characteristic.declarationHandle) {
                return service.characteristics.first { $0.characteristic.declarationHandle == characteristic.declarationHandle }
            }
            return nil
        }
    }
}
