import BluetoothCore

/// A peer's database as a client discovered it, with the Database Hash it had then.
public struct GATTCachedDatabase: Sendable, Equatable, Codable {
    /// The peer's identity address.
    public var peer: DeviceAddress
    /// The peer's Database Hash when discovered; `nil` if it has none.
    public var hash: GATTDatabaseHash?
    public var services: [GATTDiscoveredService]

    public init(peer: DeviceAddress, hash: GATTDatabaseHash?, services: [GATTDiscoveredService]) {
        self.peer = peer
        self.hash = hash
        self.services = services
    }
}

/// Where a client keeps the databases of bonded (or trusted) peers between connections
/// (Core 6.0, Vol 3, Part G, 2.5.2), by peer identity address (an address type counts as
/// its base type). See ``InMemoryGATTDatabaseCache`` and ``FileGATTDatabaseCache``.
public protocol GATTDatabaseCache: Sendable {
    func database(for peer: DeviceAddress) async -> GATTCachedDatabase?
    /// Keeps a database under its ``GATTCachedDatabase/peer``, replacing any before.
    func save(_ database: GATTCachedDatabase) async
    func removeDatabase(for peer: DeviceAddress) async
}

/// Cached databases in memory, for as long as the process runs; at most ``capacity`` peers
/// (the one saved longest ago goes first).
public actor InMemoryGATTDatabaseCache: GATTDatabaseCache {
    public nonisolated let capacity: Int
    private var databases: [DeviceAddress: GATTCachedDatabase] = [:]
    private var order: [DeviceAddress] = []

    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    public func database(for peer: DeviceAddress) -> GATTCachedDatabase? {
        databases[peer.identityKey]
    }

    public func save(_ database: GATTCachedDatabase) {
        let key = database.peer.identityKey
        order.removeAll { $0 == key }
        order.append(key)
        databases[key] = database
        while order.count > capacity { databases[order.removeFirst()] = nil }
    }

    public func removeDatabase(for peer: DeviceAddress) {
        let key = peer.identityKey
        databases[key] = nil
        order.removeAll { $0 == key }
    }

    /// The peers with a database, oldest first.
    public var peers: [DeviceAddress] { order }
}

extension DeviceAddress {
    /// The address with its base type (public or random): how caches and bonds key peers.
    var identityKey: DeviceAddress { DeviceAddress(address, type: type.base) }
}
