import BluetoothCore

/// A bond with one peer (Core 6.0, Vol 3, Part C, 9.4.2.4 and Part H, 2.4.1): the keys both
/// sides distributed in a pairing and kept, and what the pairing was worth. Stored in a
/// ``BondStore`` under ``localIdentity`` and ``peerIdentity``.
public struct Bond: Sendable, Hashable, Codable {
    /// The identity address this device used (a host may have several).
    public var localIdentity: DeviceAddress
    /// The peer's identity address: the one it distributed, else the address it paired from.
    public var peerIdentity: DeviceAddress
    /// The encryption key size in octets, 7…16.
    public var keySize: Int
    /// The pairing had MITM protection (Passkey Entry, Numeric Comparison or OOB).
    public var isAuthenticated: Bool
    /// The pairing was LE Secure Connections.
    public var isSecureConnections: Bool
    /// What the peer distributed.
    public var peerKeys: BondKeys
    /// What this device distributed: its LTK, EDIV and Rand of a legacy pairing as
    /// peripheral, its IRK and CSRK.
    public var localKeys: BondKeys
    /// When the bond was made, in seconds since 1970-01-01 UTC.
    public var createdAt: Int64
    /// What this device's GATT server keeps of the peer as a client between connections: its
    /// Client Characteristic Configurations (Core 6.0, Vol 3, Part G, 3.3.3.3), its Client
    /// Supported Features and the database it last knew (Part G, 2.5.2.1); `nil` until a link of
    /// the peer encrypted with this bond's key subscribes or ends. Kept with the bond so that it
    /// lasts across runs and goes with the bond. (Stored under the key `clientCachingState`.)
    public var clientState: GATTBondedClientState?

    /// The key sizes a pairing can agree on (Core 6.0, Vol 3, Part H, 2.3.4).
    public static let keySizes = 7...16

    public init(localIdentity: DeviceAddress, peerIdentity: DeviceAddress, keySize: Int = 16, isAuthenticated: Bool = false,
                isSecureConnections: Bool = false, peerKeys: BondKeys = BondKeys(), localKeys: BondKeys = BondKeys(),
                createdAt: Int64 = 0, clientState: GATTBondedClientState? = nil) {
        self.localIdentity = localIdentity
        self.peerIdentity = peerIdentity
        self.keySize = keySize
        self.isAuthenticated = isAuthenticated
        self.isSecureConnections = isSecureConnections
        self.peerKeys = peerKeys
        self.localKeys = localKeys
        self.createdAt = createdAt
        self.clientState = clientState
    }

    /// The earlier form of ``init(localIdentity:peerIdentity:keySize:isAuthenticated:isSecureConnections:peerKeys:localKeys:createdAt:clientState:)``.
    @available(*, deprecated, renamed: "init(localIdentity:peerIdentity:keySize:isAuthenticated:isSecureConnections:peerKeys:localKeys:createdAt:clientState:)")
    public init(localIdentity: DeviceAddress, peerIdentity: DeviceAddress, keySize: Int = 16, isAuthenticated: Bool = false,
                isSecureConnections: Bool = false, peerKeys: BondKeys = BondKeys(), localKeys: BondKeys = BondKeys(),
                createdAt: Int64 = 0, clientCachingState: GATTBondedClientState?) {
        self.init(localIdentity: localIdentity, peerIdentity: peerIdentity, keySize: keySize, isAuthenticated: isAuthenticated,
                  isSecureConnections: isSecureConnections, peerKeys: peerKeys, localKeys: localKeys, createdAt: createdAt,
                  clientState: clientCachingState)
    }

    /// The earlier name of ``clientState``.
    @available(*, deprecated, renamed: "clientState")
    public var clientCachingState: GATTBondedClientState? {
        get { clientState }
        set { clientState = newValue }
    }

    // The bond file keeps the key it had before the state held subscriptions.
    private enum CodingKeys: String, CodingKey {
        case localIdentity, peerIdentity, keySize, isAuthenticated, isSecureConnections, peerKeys, localKeys, createdAt
        case clientState = "clientCachingState"
    }

    /// The pair of identities the bond is stored under.
    var identities: BondIdentities { BondIdentities(local: localIdentity, peer: peerIdentity) }
}

/// The (local, peer) identity pair a bond is found by. Identity addresses are public or
/// random: the "resolved identity" types of HCI events count as their base type.
struct BondIdentities: Hashable, Sendable {
    let local: DeviceAddress
    let peer: DeviceAddress

    init(local: DeviceAddress, peer: DeviceAddress) {
        self.local = DeviceAddress(local.address, type: local.type.base)
        self.peer = DeviceAddress(peer.address, type: peer.type.base)
    }
}
