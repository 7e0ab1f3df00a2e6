import BluetoothCore

/// What this device's GATT server keeps of a bonded client between its connections: the
/// Client Characteristic Configurations it wrote (Core 6.0, Vol 3, Part G, 3.3.3.3: they "shall
/// be persistent across connections for bonded devices"), and its robust caching state (Part G,
/// 2.5.2.1): the Client Supported Features it wrote, and the Database Hash of the database it
/// knew when it left (`nil` when it left change-unaware).
///
/// Kept under the bond's identity, never under an address: the host stores it with the bond
/// (``Bond/clientState``), so it lasts across runs and goes when the bond goes, and a link takes
/// it up only once it is encrypted with that bond's key.
public struct GATTBondedClientState: Sendable, Hashable, Codable {
    /// The Client Supported Features the client wrote (Core 6.0, Vol 3, Part G, 7.2).
    public var supportedFeatures: UInt8
    /// The hash of the database the client was aware of when it left.
    public var knownDatabaseHash: GATTDatabaseHash?
    /// The client's Client Characteristic Configurations that were not empty, in handle order.
    public var subscriptions: [GATTStoredSubscription]

    public init(supportedFeatures: UInt8 = 0, knownDatabaseHash: GATTDatabaseHash? = nil, subscriptions: [GATTStoredSubscription] = []) {
        self.supportedFeatures = supportedFeatures
        self.knownDatabaseHash = knownDatabaseHash
        self.subscriptions = subscriptions
    }

    private enum CodingKeys: String, CodingKey {
        case supportedFeatures, knownDatabaseHash, subscriptions
    }

    /// Reads bonds written before subscriptions were kept (no `subscriptions` key) as having none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        supportedFeatures = try container.decode(UInt8.self, forKey: .supportedFeatures)
        knownDatabaseHash = try container.decodeIfPresent(GATTDatabaseHash.self, forKey: .knownDatabaseHash)
        subscriptions = try container.decodeIfPresent([GATTStoredSubscription].self, forKey: .subscriptions) ?? []
    }
}

/// One Client Characteristic Configuration a bonded client left (``GATTBondedClientState``):
/// restored on its next link only where this server still has a characteristic of that UUID at
/// that handle, and only the bits its properties allow.
public struct GATTStoredSubscription: Sendable, Hashable, Codable {
    /// The characteristic value's handle.
    public var valueHandle: UInt16
    /// The characteristic's UUID when the client subscribed.
    public var characteristicUUID: BluetoothUUID
    public var configuration: ClientCharacteristicConfiguration

    public init(valueHandle: UInt16, characteristicUUID: BluetoothUUID, configuration: ClientCharacteristicConfiguration) {
        self.valueHandle = valueHandle
        self.characteristicUUID = characteristicUUID
        self.configuration = configuration
    }
}

/// The earlier name of ``GATTBondedClientState``, from when it held robust caching state only.
@available(*, deprecated, renamed: "GATTBondedClientState")
public typealias GATTClientCachingState = GATTBondedClientState

/// Where the server keeps bonded clients' ``GATTBondedClientState`` between runs, by the
/// bond's identity (``LinkSecurity/bondIdentity``). The host's keeps it in its bond store, with
/// the bond; without one the server keeps it in memory only.
public struct GATTClientStateStorage: Sendable {
    /// The state a bonded client left, if any.
    public var load: @Sendable (_ identity: DeviceAddress) async -> GATTBondedClientState?
    /// Keeps the state of a bonded client (its configurations changed, or its connection ended).
    public var save: @Sendable (_ identity: DeviceAddress, _ state: GATTBondedClientState) async -> Void

    public init(load: @escaping @Sendable (_ identity: DeviceAddress) async -> GATTBondedClientState?,
                save: @escaping @Sendable (_ identity: DeviceAddress, _ state: GATTBondedClientState) async -> Void) {
        self.load = load
        self.save = save
    }
}
