import BluetoothHost
import Foundation

/// Decides about notifications that arrive on a characteristic Bluejay listens to but for
/// which no callback is installed: after a restart with restoration, and after an
/// auto-reconnect, until the app calls ``Bluejay/listen(to:multipleListenOption:completion:)``
/// again. Called on the callback queue.
public protocol ListenRestorer: AnyObject, Sendable {
    /// - Parameters:
    ///   - peripheral: the connected peripheral.
    ///   - characteristic: the characteristic the notification came from.
    ///   - value: the notification's bytes.
    /// - Returns: ``ListenRestoreAction/promiseRestoration`` after installing a listen (or to
    ///   install one later; values arriving meanwhile come here again), or
    ///   ``ListenRestoreAction/stopListen`` to turn the notifications off.
    func didReceiveUnhandledListen(from peripheral: PeripheralIdentifier, on characteristic: CharacteristicIdentifier, with value: Data?) -> ListenRestoreAction
}

/// A ``ListenRestorer``'s decision.
public enum ListenRestoreAction: Sendable, Equatable {
    /// Keep the notifications on; a listen is or will be installed.
    case promiseRestoration
    /// Turn the notifications off (the Client Characteristic Configuration is cleared).
    case stopListen
}
