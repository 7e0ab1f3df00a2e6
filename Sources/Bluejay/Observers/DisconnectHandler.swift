import BluetoothHost

/// The one place to decide what happens after a disconnection: restart a scan, reset the
/// UI, and turn auto-reconnect on or off. Called on the callback queue after every
/// disconnection, expected or not, once the connection observers have been told. Held weakly.
public protocol DisconnectHandler: AnyObject, Sendable {
    /// - Parameters:
    ///   - peripheral: the peripheral that was connected.
    ///   - error: `nil` for an expected disconnection (requested by the app), otherwise why
    ///     the link was lost: always a ``BluejayError`` (`error as? BluejayError`). The
    ///     parameter is `Error?`, as in Bluejay's READMEs, so that their handlers compile as
    ///     written.
    ///   - autoReconnect: whether Bluejay will reconnect if the handler does not change it.
    func didDisconnect(from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool) -> AutoReconnectMode
}

/// A ``DisconnectHandler``'s decision about auto-reconnect.
public enum AutoReconnectMode: Sendable, Equatable {
    /// Keep ``Bluejay/shouldAutoReconnect`` as it is.
    case noChange
    /// Set ``Bluejay/shouldAutoReconnect``; `true` reconnects now, `false` does not.
    case change(shouldAutoReconnect: Bool)
}
