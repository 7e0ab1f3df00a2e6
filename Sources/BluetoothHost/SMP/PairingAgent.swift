import BluetoothCore

/// The user's side of pairing: what the host asks when a pairing method needs a person
/// (Core 6.0, Vol 3, Part H, 2.3.5). Set one with ``LEHost/setPairingAgent(_:)``; its IO
/// capability is ``SecurityManagerSettings/ioCapability``.
///
/// Every method has a default: accept incoming pairings, show nothing, type nothing (the
/// pairing then fails with Passkey Entry Failed), refuse numeric comparisons and refuse to
/// replace a bond with a weaker key, which is right for a device without input or output.
///
/// Each question waits at most the Security Manager Timer
/// (``SecurityManagerSettings/timeout``): the host then fails the pairing and cancels the task
/// that asked, so an agent should return when its task is cancelled.
public protocol PairingAgent: Sendable {
    /// A peer started pairing (a Pairing Request, or a Security Request to a central).
    /// Return `false` to refuse with Pairing Not Supported.
    func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool
    /// Show this passkey (six digits) so the user types it on the peer.
    func display(passkey: UInt32, for peer: DeviceAddress) async
    /// The passkey the user typed, 0…999999, or `nil` to cancel.
    func passkey(for peer: DeviceAddress) async -> UInt32?
    /// Whether the user sees the same six-digit number on the peer.
    func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool
    /// The peer's user pressed a key while typing the passkey this device displays (a Keypress
    /// Notification, Core 6.0, Vol 3, Part H, 3.5.8), in the order they came: to show progress
    /// (digits typed, erased, cleared, done). Only when both devices asked for them
    /// (``SecurityManagerSettings/keypressNotifications``), at most 64 per pairing.
    func keypress(_ type: SMPKeypressNotificationType, for peer: DeviceAddress) async
    /// A pairing would replace the bond with `peer` by a weaker key (unauthenticated over
    /// authenticated, legacy over LE Secure Connections, or shorter): return `true` to allow it,
    /// as a phone asks "pair again?". Asked before the keys are exchanged when the peer's
    /// address names the bond, else once the identity it distributed does
    /// (``BondReplacement/isClaimedIdentity``: anybody can claim an identity, so allow that only
    /// when the user knows the device lost its keys). The default refuses: the bond is kept and
    /// the pairing fails with ``PairingFailure/weakerThanBond(_:)``.
    func shouldReplaceBond(_ replacement: BondReplacement, for peer: DeviceAddress) async -> Bool
    /// A pairing replaced the bond stored under `replacement.identity` (also
    /// ``HostEvent/bondReplaced(_:_:)``); `peer` is the address it paired from.
    func bondReplaced(_ replacement: BondReplacement, for peer: DeviceAddress) async
    /// A pairing ended, well or not.
    func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async
}

extension PairingAgent {
    public func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool { true }
    public func display(passkey: UInt32, for peer: DeviceAddress) async {}
    public func passkey(for peer: DeviceAddress) async -> UInt32? { nil }
    public func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool { false }
    public func keypress(_ type: SMPKeypressNotificationType, for peer: DeviceAddress) async {}
    public func shouldReplaceBond(_ replacement: BondReplacement, for peer: DeviceAddress) async -> Bool { false }
    public func bondReplaced(_ replacement: BondReplacement, for peer: DeviceAddress) async {}
    public func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async {}
}

/// The agent of a host nobody gave one: accepts Just Works, can answer nothing else.
struct DefaultPairingAgent: PairingAgent {}
