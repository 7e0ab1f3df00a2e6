import BluetoothCore

/// Bonds kept for as long as the process runs (tests, simulations, apps that do not want
/// bonds on disk).
public actor InMemoryBondStore: BondStore {
    private var stored: [BondIdentities: Bond] = [:]
    private var changes: UInt64 = 0

    public init(bonds: [Bond] = []) {
        for bond in bonds { stored[bond.identities] = bond }
    }

    public func bond(local: DeviceAddress, peer: DeviceAddress) -> Bond? {
        stored[BondIdentities(local: local, peer: peer)]
    }

    /// Sorted by local, then peer identity.
    public func bonds() -> [Bond] {
        stored.values.sorted { ($0.localIdentity.address, $0.peerIdentity.address) < ($1.localIdentity.address, $1.peerIdentity.address) }
    }

    public func save(_ bond: Bond) {
        stored[bond.identities] = bond
        changes += 1
    }

    @discardableResult
    public func removeBond(local: DeviceAddress, peer: DeviceAddress) -> Bool {
        changes += 1
        return stored.removeValue(forKey: BondIdentities(local: local, peer: peer)) != nil
    }

    /// Changes with every save and removal.
    public func revision() async -> UInt64? { changes }
}
