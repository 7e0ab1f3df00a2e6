import BluetoothCore
import BluetoothHost

extension Bluejay {
    /// A pairing on `connection` revealed the peer's identity (``HostEvent/identityResolved(_:_:)``).
    /// When it is Bluejay's link, the peripheral is known by its identity from now on: the
    /// link, ``peripheralState``, auto-reconnection; observers and ``connectionEvents()`` are
    /// told. The link stays the same object, so queued operations and listens carry on.
    func identityResolved(_ connection: any CentralConnection, _ identity: DeviceAddress) {
        let change = state.withLock { state -> (previous: PeripheralIdentifier, identity: PeripheralIdentifier)? in
            guard let link = state.link.link, link.connection === connection, let previous = link.learn(identity: identity) else { return nil }
            if state.lastPeripheral == previous { state.lastPeripheral = link.identifier }
            state.peripheralStateListeners.publish(PeripheralState(state.link))
            return (previous, link.identifier)
        }
        guard let change else { return }
        log(.info, "\(change.previous) is \(change.identity)")
        let observers = state.withLock { $0.connectionObservers.live() }
        onCallbackQueue { observers.forEach { $0.identityResolved(change.previous, is: change.identity) } }
        broadcast(.identityResolved(previous: change.previous, identity: change.identity))
    }
}
