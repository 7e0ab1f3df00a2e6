import BluetoothHost

/// Follows Bluetooth availability and the connection. Bluejay holds observers weakly and
/// calls them on the callback queue (``StartOptions/callbackQueue``).
///
/// On registration the observer is told the current state at once: `bluetoothAvailable`
/// and, when connected, `connected(to:)`.
public protocol ConnectionObserver: AnyObject, Sendable {
    /// The controller became usable (`true`) or stopped being usable (`false`).
    func bluetoothAvailable(_ available: Bool)
    /// A connection to `peripheral` is up, whether requested, auto-reconnected or restored.
    func connected(to peripheral: PeripheralIdentifier)
    /// The connection to `peripheral` ended, expectedly or not.
    func disconnected(from peripheral: PeripheralIdentifier)
    /// The connected peripheral paired and revealed its identity: `previous` (a resolvable
    /// private address) is `identity` from now on (``ConnectionEvent/identityResolved(previous:identity:)``).
    func identityResolved(_ previous: PeripheralIdentifier, is identity: PeripheralIdentifier)
}

extension ConnectionObserver {
    public func bluetoothAvailable(_ available: Bool) {}
    public func connected(to peripheral: PeripheralIdentifier) {}
    public func disconnected(from peripheral: PeripheralIdentifier) {}
    public func identityResolved(_ previous: PeripheralIdentifier, is identity: PeripheralIdentifier) {}
}
