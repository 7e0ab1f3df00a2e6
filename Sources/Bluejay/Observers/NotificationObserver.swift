import BluetoothHost
import Foundation

/// Sees every value that arrives on a listened characteristic, whichever listen it goes to
/// (callback, `async`, background task, or none yet after a restoration), in arrival order
/// for each characteristic (each subscription hands its values over on its own).
/// Called on the callback queue; held weakly. Observing does not subscribe: values come only
/// for characteristics something listens to.
public protocol NotificationObserver: AnyObject, Sendable {
    func didReceiveNotification(_ notification: CharacteristicNotification)
}
