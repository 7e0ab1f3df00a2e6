import BluetoothHost

/// Receives the results of ``Bluejay/readRSSI()``. Called on the callback queue; held weakly.
public protocol RSSIObserver: AnyObject, Sendable {
    /// The signal strength of the link in dBm, or why it could not be read (always a
    /// ``BluejayError``; the parameter is `Error?` as in Bluejay).
    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: (any Error)?)
}
