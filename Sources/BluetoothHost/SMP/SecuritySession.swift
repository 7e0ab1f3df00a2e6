import BluetoothCore

/// What the host keeps about the security of one connection (see LEHost+SecurityManager.swift).
struct SecuritySession {
    /// The pairing running on the link, if any.
    var procedure: PairingProcedure?
    /// The pairing has completed its key distribution and is finishing: keeping its bond (the
    /// store, the agent's consent to a replacement), then waiting for its last PDUs to leave
    /// the controller. Its callers are not answered yet.
    var isFinishing = false
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
    /// The link's security the app was last told of (``HostEvent/securityChanged(_:_:)``).
    var announcedSecurity: LinkSecurity?
    /// The tasks asking the pairing agent for this link's pairing, cancelled when it ends so
    /// that no question outlives the Security Manager Timer.
    var agentTasks: [Task<Void, Never>] = []
    /// The latest Keypress Notification on its way to the agent, which the next one follows.
    var lastKeypress: Task<Void, Never>?
    /// Peripheral: the app asked for MITM protection (a Security Request with MITM), so the
    /// central's pairing must give it.
    var requestedAuthentication = false
    /// Central: a Security Request is being answered (Vol 3, Part H, 2.4.6); repeats are
    /// dropped meanwhile.
    var securityRequestPending = false
    /// Central: when the last Security Request was taken, for the rate limit.
    var lastSecurityRequest: BluetoothClock.Instant?

    /// A pairing runs or is finishing: the link's security is about to change.
    var isPairing: Bool {
        isFinishing || procedure.map { !$0.isFinished } ?? false
    }

    /// The link is encrypted with the running pairing's own key (its key distribution, or its
    /// finishing): the security of the moment is not yet the pairing's outcome (no bond yet).
    var isPastEncryption: Bool {
        if isFinishing { return true }
        guard let procedure, !procedure.isFinished else { return false }
        return procedure.phase == .distributingKeys
    }
}
