import BluetoothHost

/// What ``Bluejay/connectionEvents()`` reports: the same events as ``ConnectionObserver``,
/// ``ServiceObserver`` and ``DisconnectHandler`` see, as an `AsyncSequence`.
public enum ConnectionEvent: Sendable, Equatable {
    /// The controller became usable, or stopped being usable.
    case bluetoothAvailable(Bool)
    case connected(PeripheralIdentifier)
    /// `error` is `nil` for an expected disconnection; `willReconnect` says whether
    /// Bluejay reconnects (after the ``DisconnectHandler`` had its say).
    case disconnected(PeripheralIdentifier, error: BluejayError?, willReconnect: Bool)
    /// A Service Changed indication arrived.
    case servicesModified(PeripheralIdentifier, invalidated: [ServiceIdentifier])
}
