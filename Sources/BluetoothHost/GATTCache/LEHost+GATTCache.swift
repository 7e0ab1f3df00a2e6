import BluetoothCore
import Logging
import Synchronization

/// The database cache of a host and the peers the application trusts to keep their database.
final class GATTCaching: Sendable {
    let cache: any GATTDatabaseCache
    private let trusted = Mutex<Set<DeviceAddress>>([])

    init(configuration: HostConfiguration, logger: Logger) {
        if let cache = configuration.gattDatabaseCache {
            self.cache = cache
        } else if let bonds = configuration.bondStore as? FileBondStore {
            cache = FileGATTDatabaseCache(directory: FileGATTDatabaseCache.defaultDirectory(bondDirectory: bonds.directory), logger: logger)
        } else {
            cache = InMemoryGATTDatabaseCache()
        }
    }

    func isTrusted(_ peer: DeviceAddress) -> Bool { trusted.withLock { $0.contains(peer.identityKey) } }

    func setTrusted(_ peer: DeviceAddress, _ isTrusted: Bool) {
        trusted.withLock { set in
            if isTrusted { set.insert(peer.identityKey) } else { set.remove(peer.identityKey) }
        }
    }
}

/// What ``LEHost/prepareDatabase(of:)`` did.
public enum GATTDatabasePreparation: Sendable, Equatable {
    /// The peer is neither bonded nor trusted: nothing cached, discovery as usual.
    case notEligible
    /// The peer's address has a bond, but the link is not encrypted with that bond's key
    /// (the device could not encrypt with it: it lost the bond, or it is not the bonded device
    /// but one using its address; or this device is the peripheral and the central has not
    /// encrypted with the bond). Its cached database is neither used nor replaced; discovery
    /// as usual.
    case unverified
    /// The cached database is the peer's (same Database Hash, or no hash on either side):
    /// discovery is answered from it, no discovery PDU was sent.
    case reused(hash: GATTDatabaseHash?)
    /// The database was discovered (nothing cached, or the hash differed) and cached.
    case discovered(hash: GATTDatabaseHash?)
}

/// GATT caching on the client side (Core 6.0, Vol 3, Part G, 2.5.2): the databases of bonded
/// peers, and of peers the application trusts, are kept with their Database Hash.
extension LEHost {
    /// The cache the host keeps databases in (``HostConfiguration/gattDatabaseCache``).
    public nonisolated var gattDatabaseCache: any GATTDatabaseCache { gattCaching.cache }

    /// Marks a peer (by identity address) whose database may be cached without a bond, for
    /// a peer that never bonds but whose database the application knows to be stable.
    ///
    /// Trust is in the address alone: nothing proves that the device at it is the one the
    /// application means, so any device that uses the address has its database cached in
    /// that peer's place (and a later connection to the real peer with the same Database Hash
    /// uses those handles until Database Out Of Sync says otherwise). Trust a peer only where
    /// no other device can take its address. A peer with a bond is not trusted this way: its
    /// database is cached only over a link encrypted with the bond's key.
    public nonisolated func setDatabaseTrusted(_ trusted: Bool, for peer: DeviceAddress) {
        gattCaching.setTrusted(peer, trusted)
    }

    /// Whether the application marked the peer's database as trusted.
    public nonisolated func isDatabaseTrusted(_ peer: DeviceAddress) -> Bool { gattCaching.isTrusted(peer) }

    /// Readies a connection's ``GATTClient`` with the peer's database. For a bonded peer,
    /// only over a link encrypted with the bond's key (as the central, this first encrypts
    /// the link with it; it never pairs): otherwise ``GATTDatabasePreparation/unverified``,
    /// since an address proves nothing and a device using a bonded peer's address must neither
    /// read nor write that peer's cached database. For a trusted peer without a bond, by its
    /// address (see ``setDatabaseTrusted(_:for:)``). Then: reads the Database Hash (Read By
    /// Type of 0x2B2A, one request); when the cached database has the same hash (or neither has
    /// one) the client answers discovery from it and sends no discovery PDU; otherwise the
    /// whole database is discovered and cached, under the bond's identity. When the peer has
    /// Client Supported Features, its robust caching bit is set (Vol 3, Part G, 7.2), so that
    /// the peer answers Database Out Of Sync rather than serve stale handles. A Service Changed
    /// indication or Database Out Of Sync later drops the cached database (the next connection
    /// discovers again).
    @discardableResult
    public func prepareDatabase(of connection: Connection) async throws -> GATTDatabasePreparation {
        let peer: DeviceAddress
        switch await databaseOwner(of: connection) {
        case let .owner(owner): peer = owner
        case let .none(outcome): return outcome
        }
        let gatt = connection.gatt
        let cache = gattCaching.cache
        let hash = try await gatt.readDatabaseHash()
        dropCacheWhenStale(gatt, peer: peer, hash: hash)
        if let cached = await cache.database(for: peer), cached.hash == hash {
            gatt.useKnownDatabase(cached.services)
            logger.info("database of \(peer) unchanged (hash \(hash.map(\.description) ?? "none")): discovery skipped")
            await enableRobustCaching(gatt, in: cached.services)
            return .reused(hash: hash)
        }
        let services = try await gatt.discoverDatabase()
        gatt.useKnownDatabase(services)
        await cache.save(GATTCachedDatabase(peer: peer, hash: hash, services: services))
        logger.info("database of \(peer) discovered and cached (\(services.count) services, hash \(hash.map(\.description) ?? "none"))")
        await enableRobustCaching(gatt, in: services)
        return .discovered(hash: hash)
    }

    /// Under whose name a link may use and fill the cache, or why it may not.
    private enum DatabaseOwner {
        case owner(DeviceAddress)
        case none(GATTDatabasePreparation)
    }

    /// The bond's identity once the link is encrypted with that bond's key (encrypting it first
    /// as the central), a trusted peer's address when it has no bond, else none.
    private func databaseOwner(of connection: Connection) async -> DatabaseOwner {
        guard let bond = await bond(for: connection) else {
            return gattCaching.isTrusted(connection.peerIdentity) ? .owner(connection.peerIdentity) : .none(.notEligible)
        }
        if connection.role == .central, !connection.security.isEncrypted {
            do {
                _ = try await secure(connection, allowPairing: false)
            } catch {
                logger.warning("\(connection.peer) has the address of a bond but did not encrypt with its key (\(error)): its cached database is left alone")
                return .none(.unverified)
            }
        }
        // The bond whose key encrypts the link (set as the key went to the controller, never
        // from an address): only a peer holding that bond's keys can have encrypted it.
        let bondIdentity = DeviceAddress(bond.peerIdentity.address, type: bond.peerIdentity.type.base)
        guard connection.security.isEncrypted, connection.security.bondIdentity == bondIdentity else {
            logger.info("the link to \(connection.peer) is not encrypted with the key of its bond: its cached database is left alone")
            return .none(.unverified)
        }
        return .owner(bond.peerIdentity)
    }

    /// When the client finds the database stale, the cached copy with that hash goes (a copy
    /// cached since, under a new hash, stays).
    private func dropCacheWhenStale(_ gatt: GATTClient, peer: DeviceAddress, hash: GATTDatabaseHash?) {
        let cache = gattCaching.cache
        let logger = self.logger
        gatt.onDatabaseStale {
            Task {
                guard let cached = await cache.database(for: peer), cached.hash == hash else { return }
                logger.info("dropping the stale cached database of \(peer)")
                await cache.removeDatabase(for: peer)
            }
        }
    }

    /// Writes the robust caching bit when the peer has Client Supported Features. This client
    /// sets no other bit, so writing 0x01 never clears one (Vol 3, Part G, 7.2).
    private func enableRobustCaching(_ gatt: GATTClient, in services: [GATTDiscoveredService]) async {
        let features = services.lazy.filter { $0.service.uuid == GATTAttributeType.gattService }
            .flatMap(\.characteristics).first { $0.characteristic.uuid == GATTAttributeType.clientSupportedFeatures }
        guard let features else { return }
        do {
            try await gatt.writeValue([0x01], handle: features.characteristic.valueHandle)
        } catch {
            logger.info("could not enable robust caching: \(error)")
        }
    }
}
