/// Bluejay's auto-reconnect rules, as a plain state machine (no I/O):
///
/// - ``shouldAutoReconnect`` starts `true`;
/// - it becomes `false` when a disconnection the app asked for (``Bluejay/disconnect(immediate:completion:)``,
///   ``Bluejay/cancelEverything(shouldDisconnect:)``) succeeds;
/// - it becomes `true` again after every successful connection;
/// - the ``DisconnectHandler`` may change it after any disconnection;
/// - after an unexpected disconnection, Bluejay reconnects when it is `true`.
struct AutoReconnectPolicy: Sendable, Equatable {
    /// Whether a lost connection is re-established.
    private(set) var shouldAutoReconnect = true
    /// The app asked for the disconnection that is in progress.
    private(set) var disconnectionRequested = false

    /// What a disconnection was, and what happens next unless the handler decides otherwise.
    struct Disconnection: Sendable, Equatable {
        /// Requested by the app (`true`) or not.
        var isExpected: Bool
        /// Whether Bluejay will reconnect if the ``DisconnectHandler`` does not change it.
        var willReconnect: Bool
    }

    /// A connection came up (requested, auto-reconnected or restored).
    mutating func didConnect() {
        shouldAutoReconnect = true
        disconnectionRequested = false
    }

    /// The app asked to disconnect.
    mutating func disconnectionWasRequested() {
        disconnectionRequested = true
    }

    /// The disconnection the app asked for did not happen (nothing was connected).
    mutating func requestedDisconnectionDidNotHappen() {
        disconnectionRequested = false
    }

    /// The app abandoned a connection attempt (immediate disconnect or cancelEverything while
    /// connecting): like a successful manual disconnection, auto-reconnect turns off.
    mutating func attemptWasAbandonedOnRequest() {
        disconnectionRequested = false
        shouldAutoReconnect = false
    }

    /// The link is down.
    mutating func linkDidDrop() -> Disconnection {
        let expected = disconnectionRequested
        disconnectionRequested = false
        if expected { shouldAutoReconnect = false }
        return Disconnection(isExpected: expected, willReconnect: shouldAutoReconnect)
    }

    /// Applies the handler's answer (or none); returns whether to reconnect now.
    mutating func apply(_ mode: AutoReconnectMode?) -> Bool {
        if case let .change(value)? = mode { shouldAutoReconnect = value }
        return shouldAutoReconnect
    }

    /// An auto-reconnect attempt failed. A timeout ends the attempts (the peripheral is
    /// gone); any other failure is an unexpected disconnection and goes through the handler
    /// again. Returns the disconnection to report, or `nil` to stop.
    mutating func reconnectAttemptFailed(timedOut: Bool) -> Disconnection? {
        guard !timedOut else { return nil }
        return Disconnection(isExpected: false, willReconnect: shouldAutoReconnect)
    }
}
