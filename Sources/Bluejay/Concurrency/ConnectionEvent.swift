import BluetoothHost

/// What ``Bluejay/connectionEvents()`` reports: the same events as ``ConnectionObserver``,
/// ``ServiceObserver`` and ``DisconnectHandler`` see, as an `AsyncSequence`, and the steps of
/// connecting that LittleBluetooth reports (auto-connected, failed, reconnecting, gave up).
public enum ConnectionEvent: Sendable, Equatable {
    /// The controller became usable, or stopped being usable.
    case bluetoothAvailable(Bool)
    /// A connection is up and ready, whether requested, auto-reconnected or restored.
    case connected(PeripheralIdentifier)
    /// Follows ``connected(_:)`` when Bluejay made the connection on its own: an
    /// auto-reconnect or a restoration (LittleBluetooth's auto-connection).
    case autoConnected(PeripheralIdentifier)
    /// A connection the app asked for (or a restoration) failed; Bluejay does not retry it,
    /// unless it was asked with timeout retries left
    /// (``Bluejay/connect(_:timeoutRetries:disconnectRetries:connectionTimeout:completion:)``):
    /// then ``reconnecting(_:)`` follows.
    case connectionFailed(PeripheralIdentifier, error: BluejayError)
    /// An auto-reconnect attempt is starting (after a disconnection, or after an attempt that
    /// failed other than by timing out), or a retry after a timeout.
    case reconnecting(PeripheralIdentifier)
    /// Bluejay stopped trying: an auto-reconnect attempt timed out (the peripheral seems gone),
    /// or the retry limits of ``Bluejay/connect(_:timeoutRetries:disconnectRetries:connectionTimeout:completion:)``
    /// are used up. The listens end; nothing more happens until the app connects again.
    case gaveUp(PeripheralIdentifier, error: BluejayError)
    /// `error` is `nil` for an expected disconnection; `willReconnect` says whether
    /// Bluejay reconnects (after the ``DisconnectHandler`` had its say).
    case disconnected(PeripheralIdentifier, error: BluejayError?, willReconnect: Bool)
    /// A Service Changed indication arrived.
    case servicesModified(PeripheralIdentifier, invalidated: [ServiceIdentifier])
    /// The connected peripheral, reached at a resolvable private address, paired and
    /// distributed its identity: from now on it is `identity` (in ``Bluejay/peripheralState``,
    /// later events, auto-reconnection), no longer `previous`. Queued operations and listens
    /// go on on the same link.
    case identityResolved(previous: PeripheralIdentifier, identity: PeripheralIdentifier)
}
