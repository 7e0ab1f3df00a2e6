import BluetoothCore
import BluetoothHCI
import BluetoothTransport

/// Something that happened to the host as a whole, for whoever listens to ``LEHost/events()``.
public enum HostEvent: Sendable {
    /// A connection is up, whichever side created it.
    case connected(Connection)
    /// A connection ended, with the reason the controller reported.
    case disconnected(Connection, reason: HCIStatus)
    /// A link's encryption changed: encrypted after pairing or with stored keys, or a key
    /// refresh.
    case securityChanged(Connection, LinkSecurity)
    /// A pairing on a connection ended, well or not.
    case pairingFinished(Connection, Result<PairingOutcome, PairingFailure>)
    /// A pairing replaced the bond stored under an identity with new keys: the peer paired
    /// again (it lost its keys, or was reset), or a device claimed the identity
    /// (``BondReplacement/isClaimedIdentity``). Comes before the pairing's `pairingFinished`.
    case bondReplaced(Connection, BondReplacement)
    /// The identity of a link's peer became known after the link came up: the peer paired from
    /// a resolvable private address and distributed its identity with an IRK that resolves it
    /// (``Connection/identity`` now holds it). Comes before the pairing's `pairingFinished`.
    case identityResolved(Connection, DeviceAddress)
    /// The controller reported a hardware error; the host should be restarted.
    case hardwareError(code: UInt8)
    /// The transport to the controller is gone: every connection is lost.
    case transportClosed(TransportError?)
}
