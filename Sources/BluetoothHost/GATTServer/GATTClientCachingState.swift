import BluetoothCore

/// What this device's GATT server keeps of a bonded client between its connections (Core 6.0,
/// Vol 3, Part G, 2.5.2.1): the Client Supported Features it wrote, and the Database Hash of
/// the database it knew when it left (`nil` when it left change-unaware). Kept under the bond's
/// identity, never under an address: the host stores it with the bond
/// (``Bond/clientCachingState``), so it lasts across runs and goes when the bond goes.
public struct GATTClientCachingState: Sendable, Hashable, Codable {
    /// The Client Supported Features the client wrote (Core 6.0, Vol 3, Part G, 7.2).
    public var supportedFeatures: UInt8
    /// The hash of the database the client was aware of when it left.
    public var knownDatabaseHash: GATTDatabaseHash?

    public init(supportedFeatures: UInt8, knownDatabaseHash: GATTDatabaseHash?) {
        self.supportedFeatures = supportedFeatures
        self.knownDatabaseHash = knownDatabaseHash
    }
}

/// Where the server keeps bonded clients' ``GATTClientCachingState`` between runs, by the
/// bond's identity (``LinkSecurity/bondIdentity``). The host's keeps it in its bond store, with
/// the bond; without one the server keeps it in memory only.
public struct GATTClientStateStorage: Sendable {
    /// The state a bonded client left, if any.
    public var load: @Sendable (_ identity: DeviceAddress) async -> GATTClientCachingState?
    /// Keeps the state a bonded client leaves (its connection ended).
    public var save: @Sendable (_ identity: DeviceAddress, _ state: GATTClientCachingState) async -> Void

    public init(load: @escaping @Sendable (_ identity: DeviceAddress) async -> GATTClientCachingState?,
                save: @escaping @Sendable (_ identity: DeviceAddress, _ state: GATTClientCachingState) async -> Void) {
        self.load = load
        self.save = save
    }
}
