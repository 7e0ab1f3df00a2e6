import BluetoothCore
import BluetoothHCI
import BluetoothHost

/// A central connected to this peripheral.
public struct Central: Hashable, Sendable, CustomStringConvertible {
    public var connectionHandle: UInt16
    /// Its identity address once the host knows it (a bonded central's private address
    /// resolved, or its identity distributed by a pairing on this link: see
    /// ``PeripheralConnectionEvent/identityResolved(_:)``), else its address over the air;
    /// `nil` for a bearer that is not a controller connection. Follow one link by
    /// ``connectionHandle``: the address may change from a private one to the identity.
    public var address: DeviceAddress?

    public init(connectionHandle: UInt16, address: DeviceAddress?) {
        self.connectionHandle = connectionHandle
        self.address = address
    }

    /// The central on `connectionHandle` at `address` over the air, known by its identity
    /// when `resolver` knows it.
    init(connectionHandle: UInt16, overTheAir address: DeviceAddress?, resolver: AddressResolver) {
        self.init(connectionHandle: connectionHandle, address: address.map { resolver.identity(of: $0) ?? $0 })
    }

    public var description: String { address.map { "central \($0)" } ?? "central on connection \(connectionHandle)" }
}

/// A central started or stopped wanting a characteristic's values pushed, or a bonded central
/// came back subscribed.
public struct SubscriptionChange: Hashable, Sendable {
    public var central: Central
    public var characteristic: GATTPublishedCharacteristic
    public var isNotifying: Bool
    public var isIndicating: Bool
    /// The central did not write this on its link: it is bonded, left the subscription on an
    /// earlier connection, and got it back once its link was encrypted with its bond's key (Core
    /// 6.0, Vol 3, Part G, 3.3.3.3). It gets values without subscribing again.
    public var isRestored: Bool = false
    /// The identity of the central's bond, once its link is encrypted with the bond's key.
    public var bondIdentity: DeviceAddress?
    public var isSubscribed: Bool { isNotifying || isIndicating }
}

/// Something that happened to this peripheral's links.
public enum PeripheralConnectionEvent: Hashable, Sendable {
    case connected(Central)
    case disconnected(Central, reason: HCIStatus)
    /// A central whose queue was full can take values again: update them now.
    case readyToUpdateSubscribers(Central)
    /// A central's pairing replaced the bond stored under `replacement.identity`: it paired
    /// again, or claimed that identity (see `BluetoothHost/BondReplacement`).
    case bondReplaced(Central, BondReplacement)
    /// A central that connected from a resolvable private address paired and distributed its
    /// identity: from now on it is known by it (``Central/address``), in this event and every
    /// later one about this link. Comes before the pairing's end is reported.
    case identityResolved(Central)
}

/// What `PeripheralManager/updateValue(_:for:)` did.
public struct ValueUpdateResult: Hashable, Sendable {
    /// Why some or all subscribers did not get the value.
    public enum Shortfall: Hashable, Sendable {
        /// No central subscribed.
        case noSubscribers
        /// These centrals' queues are full; wait for
        /// ``PeripheralConnectionEvent/readyToUpdateSubscribers(_:)``.
        case queueFull([Central])
    }

    /// A subscribed central that was not sent the value because its link's security does not
    /// allow it now (the characteristic's ``PeripheralCharacteristic/readSecurity`` protects
    /// pushed values too): its link is not encrypted, its key is not authenticated or too
    /// short, or its bond was removed. Retrying does not help until the central secures its link.
    public struct Withheld: Hashable, Sendable, CustomStringConvertible {
        public var central: Central
        public var reason: GATTSecurityRefusal

        public init(central: Central, reason: GATTSecurityRefusal) {
            self.central = central
            self.reason = reason
        }

        public var description: String { "\(central): \(reason)" }
    }

    /// The centrals sent a notification or an indication.
    public var delivered: [Central]
    public var shortfall: Shortfall?
    /// The subscribed centrals whose link's security did not allow the value, and why.
    public var withheld: [Withheld] = []
    /// Bonded centrals (their identities) subscribed and away that get the value when they come
    /// back: an indication kept for them, or the latest value notified where the characteristic
    /// asks for it (``PeripheralCharacteristic/notifiesLatestValueOnReconnection``).
    public var deferred: [DeviceAddress] = []

    /// Every subscriber got the value (BlueCap's `true`): none withheld, and no shortfall.
    public var succeeded: Bool { shortfall == nil && withheld.isEmpty }
}
