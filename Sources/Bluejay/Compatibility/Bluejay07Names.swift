import BluetoothHost
import Foundation

// Bluejay 0.7's spellings, where 0.8 renamed something and the old name does not clash with
// the new one. Each is deprecated with the 0.8 name, so that a port compiles first and the
// compiler then points at every line to rename.
//
// Left out because they clash with 0.8 (see the README's "Bluejay's names here"):
// 0.7's `ListenRestorer.willRestoreListen(on:) -> Bool` (0.8's protocol of the same name has
// `didReceiveUnhandledListen(from:on:with:)`), and `DisconnectionResult.success` (0.8 has
// `.disconnected(PeripheralIdentifier)`).

/// Bluejay 0.7's name for the peripheral in connection results and observers.
@available(*, deprecated, renamed: "PeripheralIdentifier")
public typealias Peripheral = PeripheralIdentifier

extension Bluejay {
    /// Bluejay 0.7's ``register(connectionObserver:)``.
    @available(*, deprecated, renamed: "register(connectionObserver:)")
    public func register(observer: any ConnectionObserver) {
        register(connectionObserver: observer)
    }

    /// Bluejay 0.7's ``unregister(connectionObserver:)``.
    @available(*, deprecated, renamed: "unregister(connectionObserver:)")
    public func unregister(observer: any ConnectionObserver) {
        unregister(connectionObserver: observer)
    }

    /// Bluejay 0.7's way to give a restored listen its callback again: a listen on a
    /// characteristic whose listen has no callback (restored, or kept across a reconnection)
    /// takes it over, which 0.8's ``listen(to:multipleListenOption:completion:)`` does.
    @available(*, deprecated, renamed: "listen(to:multipleListenOption:completion:)")
    public func restoreListen<R: Receivable>(to characteristic: CharacteristicIdentifier,
                                             completion: @escaping @Sendable (ReadResult<R>) -> Void) {
        listen(to: characteristic, multipleListenOption: .trap, completion: completion)
    }
}

extension BackgroundRestoreMode {
    /// Bluejay 0.7's `.enable(restoreIdentifier)`: restoration without a
    /// ``BackgroundRestorer`` (its reports are dropped) nor a ``ListenRestorer`` (restored
    /// listens are not enabled again).
    @available(*, deprecated, message: "use .enable(BackgroundRestoreConfig(restoreIdentifier:backgroundRestorer:listenRestorer:))")
    public static func enable(_ restoreIdentifier: String) -> BackgroundRestoreMode {
        .enable(BackgroundRestoreConfig(restoreIdentifier: restoreIdentifier, backgroundRestorer: SilentBackgroundRestorer()))
    }

    /// Bluejay 0.7's `.enableWithListenRestorer(restoreIdentifier, listenRestorer)`, with
    /// 0.8's ``ListenRestorer`` (0.7's `willRestoreListen(on:)` protocol clashes with it).
    @available(*, deprecated, message: "use .enable(BackgroundRestoreConfig(restoreIdentifier:backgroundRestorer:listenRestorer:))")
    public static func enableWithListenRestorer(_ restoreIdentifier: String, _ listenRestorer: any ListenRestorer) -> BackgroundRestoreMode {
        .enable(BackgroundRestoreConfig(restoreIdentifier: restoreIdentifier, backgroundRestorer: SilentBackgroundRestorer(),
                                        listenRestorer: listenRestorer))
    }
}

/// The restorer of 0.7's `.enable(_:)`, which had none: it continues either way.
final class SilentBackgroundRestorer: BackgroundRestorer {
    func didRestoreConnection(to peripheral: PeripheralIdentifier) -> BackgroundRestoreCompletion { .continue }
    func didFailToRestoreConnection(to peripheral: PeripheralIdentifier, error: any Error) -> BackgroundRestoreCompletion { .continue }
}

extension SynchronizedPeripheral {
    /// Bluejay 0.7's flush, with the idle window in seconds.
    @available(*, deprecated, renamed: "flushListen(to:nonZeroTimeout:completion:)")
    public func flushListen(to characteristic: CharacteristicIdentifier, idleWindow: TimeInterval, completion: () -> Void) throws {
        try flushListen(to: characteristic, nonZeroTimeout: .seconds(idleWindow), completion: completion)
    }
}
