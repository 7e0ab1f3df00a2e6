/// Bluejay's auto-reconnect rules, as a plain state machine (no I/O):
///
/// - ``shouldAutoReconnect`` starts `true`;
/// - it becomes `false` when a disconnection the app asked for (``Bluejay/disconnect(immediate:completion:)``,
///   ``Bluejay/cancelEverything(shouldDisconnect:)``) succeeds;
/// - it becomes `true` again after every successful connection;
/// - the ``DisconnectHandler`` may change it after any disconnection;
/// - after an unexpected disconnection, Bluejay reconnects when it is `true`.
///
/// With ``RetryLimits`` (BlueCap's `connect(timeoutRetries:disconnectRetries:connectionTimeout:)`)
/// an attempt that timed out is tried again while timeout retries are left (they count the
/// timeouts in a row: a connection gives them all back), and a dropped link is reconnected while
/// disconnect retries are left (they count for the whole connection request); past either,
/// Bluejay gives up.
struct AutoReconnectPolicy: Sendable, Equatable {
    /// How often to try again, from one connection request.
    struct RetryLimits: Sendable, Equatable {
        /// Attempts after an attempt that timed out.
        var timeouts: Int
        /// Reconnections after a link that dropped.
        var disconnections: Int
    }

    /// Whether a lost connection is re-established.
    private(set) var shouldAutoReconnect = true
    /// The app asked for the disconnection that is in progress.
    private(set) var disconnectionRequested = false
    /// The retry limits of the current connection request, if it has any.
    private(set) var limits: RetryLimits?
    private(set) var timeoutRetriesLeft = 0
    private(set) var disconnectRetriesLeft = 0

    /// A connection request with `limits` (or none: Bluejay's own rules) begins.
    mutating func useRetryLimits(_ limits: RetryLimits?) {
        self.limits = limits
        timeoutRetriesLeft = max(0, limits?.timeouts ?? 0)
        disconnectRetriesLeft = max(0, limits?.disconnections ?? 0)
    }

    /// An attempt timed out: whether to try again (using up a timeout retry).
    mutating func retryAfterTimeout() -> Bool {
        guard limits != nil, timeoutRetriesLeft > 0 else { return false }
        timeoutRetriesLeft -= 1
        return true
    }

    /// Whether a dropped link may be reconnected as far as the retry limits go.
    var mayReconnectAfterDisconnection: Bool { limits == nil || disconnectRetriesLeft > 0 }

    /// A reconnection after a dropped link starts: uses up a disconnect retry, if limited.
    mutating func reconnectionStarts() {
        if limits != nil, disconnectRetriesLeft > 0 { disconnectRetriesLeft -= 1 }
    }

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
        timeoutRetriesLeft = max(0, limits?.timeouts ?? 0)
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
        return Disconnection(isExpected: expected, willReconnect: shouldAutoReconnect && mayReconnectAfterDisconnection)
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
