import BluetoothCore

/// Something that happened on this device's GATT server, for whoever listens to
/// ``GATTServer/events()``.
public enum GATTServerEvent: Sendable, Hashable {
    /// A client changed its Client Characteristic Configuration of a characteristic, its
    /// connection ended (then the configuration is empty), or a bonded client's link was
    /// encrypted with its bond's key and got back the configuration it left
    /// (``GATTSubscription/isRestored``).
    case subscriptionChanged(GATTSubscription)
    /// A client exchanged the ATT MTU (Core 6.0, Vol 3, Part F, 3.4.2).
    case mtuExchanged(connectionHandle: UInt16, mtu: UInt16)
    /// A connection whose queue was reported full can take notifications again.
    case readyToUpdateSubscribers(connectionHandle: UInt16)
}

/// Which values one client wants pushed for one characteristic.
public struct GATTSubscription: Sendable, Hashable, CustomStringConvertible {
    public var connectionHandle: UInt16
    public var peer: DeviceAddress?
    public var valueHandle: UInt16
    public var characteristicUUID: BluetoothUUID
    public var configuration: ClientCharacteristicConfiguration
    /// The configuration was not written on this link: it is the one the client, bonded, left on
    /// an earlier connection (Core 6.0, Vol 3, Part G, 3.3.3.3), restored once this link was
    /// encrypted with its bond's key.
    public var isRestored: Bool
    /// The identity of the bond whose state the client took up (its link is encrypted with that
    /// bond's key); `nil` for a client not known to be bonded.
    public var bondIdentity: DeviceAddress?

    public init(connectionHandle: UInt16, peer: DeviceAddress?, valueHandle: UInt16, characteristicUUID: BluetoothUUID,
                configuration: ClientCharacteristicConfiguration, isRestored: Bool = false, bondIdentity: DeviceAddress? = nil) {
        self.connectionHandle = connectionHandle
        self.peer = peer
        self.valueHandle = valueHandle
        self.characteristicUUID = characteristicUUID
        self.configuration = configuration
        self.isRestored = isRestored
        self.bondIdentity = bondIdentity
    }

    public var isNotifying: Bool { configuration.contains(.notification) }
    public var isIndicating: Bool { configuration.contains(.indication) }
    public var isSubscribed: Bool { !configuration.isEmpty }

    public var description: String {
        let what = isNotifying && isIndicating ? "notifications and indications"
            : isNotifying ? "notifications" : isIndicating ? "indications" : "nothing"
        return "connection \(Hex.format(connectionHandle, digits: 4)) wants \(what) of \(characteristicUUID)\(isRestored ? " (restored from its bond)" : "")"
    }
}

/// What ``GATTServer/updateValue(_:forHandle:connectionHandles:)`` did for each subscriber.
public struct GATTValueUpdate: Sendable, Hashable {
    /// A subscriber that was not sent the value because its link's security does not allow it
    /// now, and why.
    public struct Withheld: Sendable, Hashable, CustomStringConvertible {
        public var connectionHandle: UInt16
        public var reason: GATTSecurityRefusal

        public init(connectionHandle: UInt16, reason: GATTSecurityRefusal) {
            self.connectionHandle = connectionHandle
            self.reason = reason
        }

        public var description: String { "connection \(Hex.format(connectionHandle, digits: 4)): \(reason)" }
    }

    /// Connections sent a notification.
    public var notified: [UInt16] = []
    /// Connections sent (or queued) an indication; each is confirmed before the next.
    public var indicated: [UInt16] = []
    /// Subscribed connections that got nothing because their queue is full.
    public var queueFull: [UInt16] = []
    /// Subscribed connections that got nothing because their link's security does not allow
    /// the value now (Core 6.0, Vol 3, Part C, 10.3.1): retrying does not help until the link
    /// is secure enough.
    public var withheld: [Withheld] = []
    /// Bonded clients (by bond identity) subscribed to the characteristic but away (no link
    /// encrypted with their bond's key) that get the value when they come back: an indication
    /// queued (``GATTServerSettings/maximumDeferredIndications``), or a notification of the
    /// latest value where the characteristic asks for it
    /// (``GATTCharacteristicDefinition/notifiesLatestValueOnReconnection``). Not counted in
    /// ``hasSubscribers``.
    public var deferred: [DeviceAddress] = []

    public init(notified: [UInt16] = [], indicated: [UInt16] = [], queueFull: [UInt16] = [], withheld: [Withheld] = [],
                deferred: [DeviceAddress] = []) {
        self.notified = notified
        self.indicated = indicated
        self.queueFull = queueFull
        self.withheld = withheld
        self.deferred = deferred
    }

    /// Whether any connection subscribed to the characteristic.
    public var hasSubscribers: Bool { !(notified.isEmpty && indicated.isEmpty && queueFull.isEmpty && withheld.isEmpty) }
    /// Whether every subscriber got the value: some subscribed, no queue was full and none was
    /// withheld.
    public var reachedAllSubscribers: Bool { hasSubscribers && queueFull.isEmpty && withheld.isEmpty }
}
