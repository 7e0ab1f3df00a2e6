import BluetoothCore

/// What the host keeps about the security of one connection (see LEHost+SecurityManager.swift).
struct SecuritySession {
    /// The pairing running on the link, if any.
    var procedure: PairingProcedure?
    /// Tells this pairing's timer and agent answers from a later pairing's.
    var procedureID: UInt64 = 0
    /// When the Security Manager Timer of the running pairing expires (Vol 3, Part H, 3.4).
    var deadline: BluetoothClock.Instant?
    var timer: Task<Void, Never>?
    /// After an SMP timeout, no further SMP procedure on this link until it reconnects (Vol 3,
    /// Part H, 3.4).
    var isHalted = false
    /// Callers waiting for the link to become secure.
    var waiters: [UInt64: CheckedContinuation<LinkSecurity, any Error>] = [:]
    /// Central: an encryption with a stored key in progress, with its bond.
    var encryptingWith: Bond?
    /// With ``encryptingWith``: pair again when the peer lost the bond.
    var repairsOnMissingKey = false
    /// Peripheral: the bond whose key answered the central's LTK Request.
    var answeredWith: Bond?
    /// The identity of the bond whose key encrypts the link: set when encryption with a
    /// stored key succeeds, or when a bonding pairing on this link stores its bond; `nil`
    /// while the link is unencrypted or encrypted with a key no bond holds. What the peer
    /// proved by encrypting, unlike its address (the GATT cache trusts this, Vol 3, Part G, 2.5.2).
    var bondIdentity: DeviceAddress?
}

/// Back-off after failed pairings with one peer (Core 6.0, Vol 3, Part H, 2.3.6): the wait
/// before a new attempt is accepted doubles with each failure and resets on success.
struct PairingRetryBackoff {
    var interval: Duration
    var notBefore: BluetoothClock.Instant
}
