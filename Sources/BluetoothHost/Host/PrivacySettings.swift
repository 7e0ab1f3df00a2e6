import BluetoothCore
import BluetoothHCI

/// This device's privacy (Core 6.0, Vol 3, Part C, 10.7): whether it advertises, scans and
/// connects from resolvable private addresses made from its IRK
/// (``HostConfiguration/identityResolvingKey``), how often they change, and how bonded peers
/// that use private addresses are treated.
///
/// Off by default, as in BlueZ (`Privacy = off` in `main.conf`): the host then uses its
/// identity address over the air. Bonded peers' private addresses are resolved in every mode.
public struct PrivacySettings: Sendable, Hashable {
    /// Whether this device uses private addresses, and which peers' packets it accepts.
    public enum Mode: Sendable, Hashable, CustomStringConvertible {
        /// This device uses its identity address; a bonded peer is accepted at its identity
        /// address as well as at a private address its IRK resolves.
        case off
        /// Network privacy mode (Vol 3, Part C, 10.7; Vol 6, Part B, 4.7): this device uses
        /// resolvable private addresses, and a bonded peer that distributed an IRK is accepted
        /// only at private addresses: its identity address over the air is ignored (scan
        /// results, connecting).
        case network
        /// Device privacy mode: this device uses resolvable private addresses, and accepts a
        /// bonded peer at its identity address too, even when it distributed an IRK (most
        /// peripherals that distribute an IRK still advertise from their identity address).
        case device

        public var description: String {
            switch self {
            case .off: return "off"
            case .network: return "network privacy mode"
            case .device: return "device privacy mode"
            }
        }
    }

    /// The recommended lifetime of a resolvable private address, TGAP(private_addr_int):
    /// 15 minutes (Core 6.0, Vol 3, Part C, Appendix A).
    public static let defaultAddressLifetime: Duration = .seconds(15 * 60)
    /// The shortest lifetime the host accepts: an address changed more often makes connecting
    /// to this device a race, and the controller's own timeout starts at one second (Vol 4,
    /// Part E, 7.8.45).
    public static let minimumAddressLifetime: Duration = .seconds(1)

    public var mode: Mode
    /// How long one resolvable private address is used before the host makes the next, on
    /// ``HostConfiguration/clock``. A change waits while a connection attempt or a pairing
    /// runs, and never happens while the controller may not take it (see ``LEHost``).
    public var addressLifetime: Duration
    /// Whether bonded peers' private addresses are resolved by the controller's resolving list
    /// when it has LL Privacy (LE feature bit 6); the host resolves those the list cannot hold,
    /// and all of them on a controller without it. `true` by default; `false` keeps every
    /// resolution in the host.
    public var usesControllerResolution: Bool

    public init(mode: Mode = .off, addressLifetime: Duration = PrivacySettings.defaultAddressLifetime,
                usesControllerResolution: Bool = true) {
        self.mode = mode
        self.addressLifetime = addressLifetime
        self.usesControllerResolution = usesControllerResolution
    }

    /// Whether this device advertises, scans and connects from resolvable private addresses.
    public var usesPrivateAddresses: Bool { mode != .off }

    /// The privacy mode of a bonded peer (Vol 6, Part B, 4.7), in the controller's resolving
    /// list and in the host's own resolution: network only when this device is in network
    /// privacy mode.
    var peerPrivacyMode: PrivacyMode { mode == .network ? .network : .device }
}
