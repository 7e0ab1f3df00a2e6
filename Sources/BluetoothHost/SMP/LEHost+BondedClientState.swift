import BluetoothCore

/// The GATT server's state of bonded clients (their Client Characteristic Configurations and
/// robust caching state, Core 6.0, Vol 3, Part G, 3.3.3.3 and 2.5.2.1), kept with each bond in
/// the bond store (``Bond/clientState``): it lasts across runs, is found only by the bond's
/// identity, and goes when the bond is removed or replaced.
extension LEHost {
    /// Gives the server its storage of bonded clients' state and the states stored now (at
    /// power-on), so that values updated before a bonded client first comes back are kept for it.
    func installClientStateStorage(_ bonds: [Bond]) async {
        await server.setClientStateStorage(GATTClientStateStorage(
            load: { [weak self] identity in await self?.clientState(of: identity) },
            save: { [weak self] identity, state in await self?.storeClientState(state, of: identity) }))
        let states = bonds.compactMap { bond in bond.clientState.map { (bond.peerIdentity, $0) } }
        await server.preloadBondedClients(Dictionary(states, uniquingKeysWith: { _, last in last }))
    }

    /// What the server kept of the bonded client with `identity`, from its bond.
    func clientState(of identity: DeviceAddress) async -> GATTBondedClientState? {
        await settledBondStore().bond(local: localAddress, peer: identity)?.clientState
    }

    /// Stores a bonded client's state in its bond, in order with the other bond saves. Nothing
    /// is stored without a bond: the state is never a record of its own.
    func storeClientState(_ state: GATTBondedClientState, of identity: DeviceAddress) async {
        // One read-modify-write of a stored bond at a time (a SignCounter's takes the same gate).
        do { try await signingGate.enter() } catch { return }
        defer { signingGate.leave() }
        let store = configuration.bondStore
        let local = localAddress
        let logger = logger
        let previous = pendingBondSave
        let save = Task {
            await previous?.value
            guard var bond = await store.bond(local: local, peer: identity), bond.clientState != state else { return }
            bond.clientState = state
            do {
                try await store.save(bond)
            } catch {
                logger.warning("could not store the GATT client state of \(identity) with its bond: \(error)")
            }
        }
        pendingBondSave = save
        await save.value
    }
}
