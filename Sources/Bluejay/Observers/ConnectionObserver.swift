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
}

extension ConnectionObserver {
    public func bluetoothAvailable(_ available: Bool) {}
    public func connected(to peripheral: PeripheralIdentifier) {}
    public func disconnected(from peripheral: PeripheralIdentifier) {}
}

/// Told when the connected peripheral's database changes: a Service Changed indication
/// (Core 6.0, Vol 3, Part G, 7.1) arrived. Called on the callback queue; held weakly.
public protocol ServiceObserver: AnyObject, Sendable {
    /// `invalidatedServices` are the services Bluejay had used in the changed range: they
    /// must be found again (Bluejay does so on their next use). An empty list means
    /// services were added where none was known: they can be used right away.
    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier])
}

/// Receives the results of ``Bluejay/readRSSI()``. Called on the callback queue; held weakly.
public protocol RSSIObserver: AnyObject, Sendable {
    /// The signal strength of the link in dBm, or why it could not be read.
    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: BluejayError?)
}

/// Receives Bluejay's log lines (queue, connection and reconnection decisions) in addition
/// to swift-log. Called on the callback queue; held weakly.
public protocol LogObserver: AnyObject, Sendable {
    func debug(_ text: String)
}
