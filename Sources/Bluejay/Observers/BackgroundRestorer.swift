import BluetoothHost
import Foundation

/// Told how restoring the previous process's connection went (see ``BackgroundRestoreConfig``).
/// Called on the callback queue.
public protocol BackgroundRestorer: AnyObject, Sendable {
    /// The persisted peripheral is connected again and its listens are re-enabled.
    func didRestoreConnection(to peripheral: PeripheralIdentifier) -> BackgroundRestoreCompletion
    /// The persisted peripheral could not be reconnected. `error` is always a
    /// ``BluejayError``; the parameter is `Error`, as in Bluejay's READMEs.
    func didFailToRestoreConnection(to peripheral: PeripheralIdentifier, error: any Error) -> BackgroundRestoreCompletion
}

/// What to do once restoration has been reported.
public enum BackgroundRestoreCompletion: Sendable {
    /// Nothing more.
    case `continue`
    /// Run this on the callback queue right after (queue follow-up work here).
    case callback(@Sendable () -> Void)
}
