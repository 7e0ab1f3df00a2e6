import BluetoothCore
import Synchronization

/// The identities of the peers this host has bonds with, readable from any thread: the GATT
/// server asks it synchronously whether a peer has a key.
final class BondedPeers: Sendable {
    private let identities = Mutex<Set<DeviceAddress>>([])

    func contains(_ peer: DeviceAddress) -> Bool {
        let identity = DeviceAddress(peer.address, type: peer.type.base)
        return identities.withLock { $0.contains(identity) }
    }

    var count: Int { identities.withLock { $0.count } }

    func insert(_ identity: DeviceAddress) {
        identities.withLock { _ = $0.insert(identity) }
    }

    func insert<S: Sequence<DeviceAddress>>(contentsOf identities: S) {
        self.identities.withLock { $0.formUnion(identities) }
    }

    /// Replaces every identity (the bonds were loaded again).
    func replace<S: Sequence<DeviceAddress>>(with identities: S) {
        let identities = Set(identities)
        self.identities.withLock { $0 = identities }
    }

    func remove(_ identity: DeviceAddress) {
        identities.withLock { _ = $0.remove(identity) }
    }
}
