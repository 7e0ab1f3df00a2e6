import BluetoothCore
import BluetoothCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Bonds: the keys of past pairings, kept in ``HostConfiguration/bondStore`` under this
/// device's identity and the peer's.
extension LEHost {
    /// The bonds this device has, with any local identity.
    public func bonds() async -> [Bond] {
        await settledBondStore().bonds().filter { $0.localIdentity == localAddress }
    }

    /// Forgets the bond with a peer (its identity address). Returns whether there was one.
    ///
    /// A link still encrypted with the bond's key stays up but is trusted no more
    /// (``LinkSecurity/isBondRemoved``): from now on the GATT server serves and pushes nothing
    /// that needs security on it, until the peer pairs again.
    @discardableResult
    public func removeBond(with peer: DeviceAddress) async throws -> Bool {
        let identity = DeviceAddress(peer.address, type: peer.type.base)
        let removed = try await settledBondStore().removeBond(local: localAddress, peer: identity)
        if removed {
            logger.info("removed the bond with \(identity)")
            bondedPeers.remove(identity)
            addressResolver.remove(identity: identity)
            resolvingList?.remove(identity: identity)
            resolvingListNeedsUpdate()
        }
        untrustLinks(encryptedWith: identity)
        // What was kept because of the bond goes with it: the peer's cached database, and its
        // features and awareness in this device's server.
        await gattCaching.cache.removeDatabase(for: identity)
        await server.forgetClient(identity)
        return removed
    }

    /// Links still encrypted with the key of `identity`'s bond, removed or replaced, stand for
    /// that identity no more (``LinkSecurity/isBondRemoved``); `except` keeps the link whose
    /// pairing made the new bond.
    func untrustLinks(encryptedWith identity: DeviceAddress, except kept: Connection? = nil) {
        for connection in links.values.map(\.connection) where connection !== kept && connection.gatt.bearer.bondRemoved(identity) != nil {
            announceSecurity(of: connection)
        }
    }

    /// The bond with a connection's peer: by its identity when known (resolved by the host or
    /// the controller), else by its address, or by an IRK that resolves its resolvable private
    /// address (Core 6.0, Vol 3, Part C, 10.8.2.3).
    public func bond(for connection: Connection) async -> Bond? {
        await bond(forAddress: connection.identity ?? connection.peer)
    }

    /// The bond of a device seen at `address`, resolving private addresses with stored IRKs.
    /// A bond kept that cannot be read now is logged as an error and not returned (see
    /// ``BondStore/readBond(local:peer:)``).
    public func bond(forAddress address: DeviceAddress) async -> Bond? {
        do {
            return try await readBond(forAddress: address)
        } catch {
            logger.error("\(error)")
            return nil
        }
    }

    /// As ``bond(forAddress:)``, throwing when the store keeps a bond it cannot read now.
    /// A private address costs no file read: the store keeps its bonds in memory, and the
    /// resolver answers with the IRKs loaded from them (and its cache of answers), loaded
    /// again only when the store says its bonds changed.
    func readBond(forAddress address: DeviceAddress) async throws(BondStoreError) -> Bond? {
        let store = await settledBondStore()
        let local = localAddress
        let identity = DeviceAddress(address.address, type: address.type.base)
        if let bond = try await store.readBond(local: local, peer: identity) { return bond }
        guard address.type.base == .random, ResolvablePrivateAddress.isResolvable(address.address.rawValue) else { return nil }
        let current = await refreshResolvingKeys(from: store)
        if let resolved = addressResolver.identity(of: address) { return try await store.readBond(local: local, peer: resolved) }
        if current { return nil }
        // A store that cannot tell whether it changed: try every IRK it has.
        return try await store.readBonds().first { bond in
            guard bond.localIdentity == local, let irk = bond.peerKeys.identityResolvingKey else { return false }
            return ResolvablePrivateAddress.resolves(address.address.rawValue, irk: irk)
        }
    }

    /// Loads the bonded identities and IRKs again when the store's bonds changed since they
    /// were (another process bonded, say). Returns whether they are those of the store now
    /// (`false` for a store that cannot tell).
    private func refreshResolvingKeys(from store: any BondStore) async -> Bool {
        guard let revision = await store.revision() else { return false }
        if revision == loadedBondRevision { return true }
        let local = localAddress
        let bonds = await store.bonds().filter { $0.localIdentity == local }
        bondedPeers.replace(with: bonds.map(\.peerIdentity))
        addressResolver.setKeys(Dictionary(bonds.compactMap { bond in bond.peerKeys.identityResolvingKey.map { (bond.peerIdentity, $0) } },
                                           uniquingKeysWith: { _, last in last }))
        loadedBondRevision = revision
        resolvingList?.setWanted(bonds.sorted { $0.createdAt < $1.createdAt }
            .compactMap { bond in bond.peerKeys.identityResolvingKey.map { (bond.peerIdentity, $0) } })
        resolvingListNeedsUpdate()
        return true
    }

    /// The bond store once the bonds this host made are written.
    func settledBondStore() async -> any BondStore {
        await pendingBondSave?.value
        return configuration.bondStore
    }

    /// The record a bonding pairing leaves: under the identity the peer distributed, else the
    /// address it paired from.
    func makeBond(_ outcome: PairingOutcome, peer: DeviceAddress) -> Bond {
        let peerIdentity = outcome.peerKeys.identityAddress ?? DeviceAddress(peer.address, type: peer.type.base)
        return Bond(localIdentity: localAddress, peerIdentity: peerIdentity, keySize: outcome.keySize,
                    isAuthenticated: outcome.method.isAuthenticated, isSecureConnections: outcome.isSecureConnections,
                    peerKeys: BondKeys(outcome.peerKeys), localKeys: BondKeys(outcome.localKeys),
                    createdAt: Int64(time(nil)))
    }

    /// Called when a bond is made, so the GATT server knows the peer has a key (it then answers
    /// Insufficient Encryption rather than Insufficient Authentication, Vol 3, Part C, 10.3.1).
    func rememberBond(_ bond: Bond) {
        bondedPeers.insert(bond.peerIdentity)
        guard let irk = bond.peerKeys.identityResolvingKey else { return }
        addressResolver.add(identity: bond.peerIdentity, irk: irk)
        // The link the pairing ran on, and any other from the same peer, now know who it is.
        for connection in links.values.map(\.connection) where connection.identity == nil {
            if addressResolver.identity(of: connection.peer) == bond.peerIdentity { learnIdentity(bond.peerIdentity, of: connection) }
        }
        resolvingList?.add(identity: bond.peerIdentity, irk: irk)
        resolvingListNeedsUpdate()
    }

    /// A link's peer turned out to be `identity` (a bonding pairing distributed it with an
    /// IRK that resolves the link's address): the link, the resolver and listeners learn it.
    func learnIdentity(_ identity: DeviceAddress, of connection: Connection) {
        connection.update(identity: identity)
        addressResolver.linkUp(at: connection.peer, identity: identity)
        logger.info("\(connection.peer) is \(identity)")
        broadcast(.identityResolved(connection, identity))
    }

    /// At power-on: the bonded peers the GATT server may expect to encrypt, and the IRKs that
    /// resolve their private addresses.
    func loadBondedPeers() async {
        let local = localAddress
        let store = await settledBondStore()
        // Taken before the bonds are read: a change in between loads them again later.
        loadedBondRevision = await store.revision()
        let bonds = await store.bonds().filter { $0.localIdentity == local }
        bondedPeers.insert(contentsOf: bonds.map(\.peerIdentity))
        let keys = bonds.compactMap { bond in bond.peerKeys.identityResolvingKey.map { (bond.peerIdentity, $0) } }
        addressResolver.setKeys(Dictionary(keys, uniquingKeysWith: { _, last in last }))
        let (known, resolver) = (bondedPeers, addressResolver)
        // A bonded peer at a private address has a key too (resolved with its IRK).
        await server.setKeyAvailability { peer in known.contains(peer) || resolver.identity(of: peer).map(known.contains) == true }
        await installSigning()
        await installClientStateStorage(bonds)
    }
}

extension BondKeys {
    /// The keys a pairing distributed, as a bond keeps them.
    init(_ keys: PairingKeys) {
        self.init(longTermKey: keys.longTermKey, ediv: keys.ediv, rand: keys.rand, identityResolvingKey: keys.identityResolvingKey,
                  identityAddress: keys.identityAddress, signatureKey: keys.signatureKey, signCounter: 0)
    }
}
