import BluetoothCore

/// The user's side of pairing: what the host asks when a pairing method needs a person
/// (Core 6.0, Vol 3, Part H, 2.3.5). Set one with ``LEHost/setPairingAgent(_:)``; its IO
/// capability is ``SecurityManagerSettings/ioCapability``.
///
/// Every method has a default: accept incoming pairings, show nothing, type nothing (the
/// pairing then fails with Passkey Entry Failed) and refuse numeric comparisons, which is right
/// for a device without input or output.
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
    /// A pairing ended, well or not.
    func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async
}

extension PairingAgent {
    public func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool { true }
    public func display(passkey: UInt32, for peer: DeviceAddress) async {}
    public func passkey(for peer: DeviceAddress) async -> UInt32? { nil }
    public func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool { false }
    public func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async {}
}

/// The agent of a host nobody gave one: accepts Just Works, can answer nothing else.
struct DefaultPairingAgent: PairingAgent {}
