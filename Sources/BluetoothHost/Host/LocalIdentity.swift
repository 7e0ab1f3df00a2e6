import BluetoothCore

/// This device's identity address (Core 6.0, Vol 3, Part C, 15.1.1): the address peers bond
/// with, distributed in Identity Address Information when pairing, and where it came from.
public struct LocalIdentity: Sendable, Hashable, CustomStringConvertible {
    /// Where the identity address came from.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// The controller's public address (Read BD_ADDR).
        case publicAddress
        /// The controller has no public address but knows a static random address of its own
        /// (Zephyr's Read Static Addresses: an nRF5x's factory address).
        case controllerStaticAddress
        /// The controller has no public address and cannot tell one: the host generated a
        /// static random address for this adapter. `isNew` when generated at this power-on;
        /// `isKept` when the host's ``StaticAddressStore`` holds it for the next run.
        case generatedStaticAddress(isNew: Bool, isKept: Bool)

        public var description: String {
            switch self {
            case .publicAddress: return "the controller's public address"
            case .controllerStaticAddress: return "the controller's own static address"
            case let .generatedStaticAddress(isNew, isKept):
                let made = isNew ? "generated now" : "generated earlier"
                return "a static address \(made) for this adapter" + (isKept ? "" : ", not kept: bonds made now will not count after a restart")
            }
        }
    }

    /// The identity address: public, or random static.
    public let address: DeviceAddress
    public let source: Source

    public init(address: DeviceAddress, source: Source) {
        self.address = address
        self.source = source
    }

    /// Whether the host made the address up (the controller has no address of its own).
    public var isGenerated: Bool {
        if case .generatedStaticAddress = source { return true }
        return false
    }

    /// Whether the identity is a static random address: the host advertises, scans and
    /// connects with own address type random (LE Set Random Address set to it).
    public var isStaticRandom: Bool { address.type.base == .random }

    public var description: String { "\(address.address) (\(address.type.base), \(source))" }
}
