import BluetoothHost

/// Told when the connected peripheral's database changes: a Service Changed indication
/// (Core 6.0, Vol 3, Part G, 7.1) arrived. Called on the callback queue; held weakly.
public protocol ServiceObserver: AnyObject, Sendable {
    /// `invalidatedServices` are the services Bluejay had used in the changed range: they
    /// must be found again (Bluejay does so on their next use). An empty list means
    /// services were added where none was known: they can be used right away.
    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier])
}
