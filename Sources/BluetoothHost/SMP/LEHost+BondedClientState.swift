import BluetoothCore

/// The GATT server's state of bonded clients (robust caching, Core 6.0, Vol 3, Part G,
/// 2.5.2.1), kept with each bond in the bond store (``Bond/clientCachingState``): it lasts
/// across runs, is found only by the bond's identity, and goes when the bond is removed.
extension LEHost {
    /// Gives the server its storage of bonded clients' state (at power-on).
    func installClientStateStorage() async {
        await server.setClientStateStorage(GATTClientStateStorage(
            load: { [weak self] identity in await self?.clientCachingState(of: identity) },
            save: { [weak self] identity, state in await self?.storeClientCachingState(state, of: identity) }))
    }

    /// What the server kept of the bonded client with `identity`, from its bond.
    func clientCachingState(of identity: DeviceAddress) async -> GATTClientCachingState? {
        await settledBondStore().bond(local: localAddress, peer: identity)?.clientCachingState
    }

    /// Stores a bonded client's state in its bond, in order with the other bond saves. Nothing
    /// is stored without a bond: the state is never a record of its own.
    func storeClientCachingState(_ state: GATTClientCachingState, of identity: DeviceAddress) async {
        // One read-modify-write of a stored bond at a time (a SignCounter's takes the same gate).
        do { try await signingGate.enter() } catch { return }
        defer { signingGate.leave() }
        let store = configuration.bondStore
        let local = localAddress
        let logger = logger
        let previous = pendingBondSave
        let save = Task {
            await previous?.value
            guard var bond = await store.bond(local: local, peer: identity), bond.clientCachingState != state else { return }
            bond.clientCachingState = state
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
