import BluetoothCore
import BluetoothHCI

/// A link-layer procedure in progress on a connection, completed by the connection event
/// whose counter reaches `at` (Core 6.0, Vol 6, Part B, 5.1).
enum LLProcedure: Sendable {
    /// Feature exchange, for LE Read Remote Features (5.1.4).
    case featureExchange(requester: ConnectionRole, at: Int)
    /// Version exchange, for Read Remote Version Information (5.1.5).
    case versionExchange(requester: ConnectionRole, at: Int)
    /// Data length update (5.1.9); `requester` is `nil` when the controllers start it on
    /// their own after connecting.
    case dataLengthUpdate(requester: ConnectionRole?, at: Int)
    /// PHY update (5.1.10), with the requester's preferences.
    case phyUpdate(requester: ConnectionRole, transmit: LEPhySet, receive: LEPhySet, at: Int)
    /// Connection update (5.1.1): new parameters from the instant `at` on.
    case connectionUpdate(requester: ConnectionRole, parameters: LinkParameters, at: Int)
    /// The peripheral's connection parameters request (5.1.7) reaches the central at `at`.
    case parameterRequest(minimum: UInt16, maximum: UInt16, latency: UInt16, timeout: UInt16, at: Int)
    /// The central's host was asked about the peripheral's request and has not answered.
    case awaitingParameterReply
    /// The central's host refused the peripheral's request; the peripheral hears it at `at`.
    case parameterRequestRejected(reason: HCIStatus, at: Int)
    /// The central's LL_ENC_REQ (after LL_PAUSE_ENC_REQ/RSP on an encrypted link) reaches the
    /// peripheral at `at`, whose host is then asked for the key (5.1.3.1, 5.1.3.2).
    case encryptionRequest(EncryptionRequest, at: Int)
    /// The peripheral's host was asked for the long term key and has not answered.
    case awaitingLongTermKey(EncryptionRequest)
    /// The peripheral's host gave its key: LL_ENC_RSP, LL_START_ENC_REQ and the two
    /// LL_START_ENC_RSP are through at `at`, or fail there if the keys differ.
    case encryptionStart(centralKey: [UInt8], peripheralKey: [UInt8], at: Int)
    /// The peripheral rejected LL_ENC_REQ (LL_REJECT_EXT_IND); the central hears it at `at`.
    case encryptionRejected(reason: HCIStatus, at: Int)

    var dueEvent: Int {
        switch self {
        case let .featureExchange(_, at), let .versionExchange(_, at), let .dataLengthUpdate(_, at),
             let .phyUpdate(_, _, _, at), let .connectionUpdate(_, _, at), let .parameterRequest(_, _, _, _, at),
             let .parameterRequestRejected(_, at), let .encryptionRequest(_, at), let .encryptionStart(_, _, at),
             let .encryptionRejected(_, at):
            return at
        case .awaitingParameterReply, .awaitingLongTermKey:
            return Int.max
        }
    }

    /// Whether this is part of a connection parameters change (one at a time per connection).
    var changesParameters: Bool {
        switch self {
        case .connectionUpdate, .parameterRequest, .awaitingParameterReply, .parameterRequestRejected: return true
        default: return false
        }
    }

    /// Whether this is part of the encryption start procedure (one at a time per connection).
    var isEncryption: Bool {
        switch self {
        case .encryptionRequest, .awaitingLongTermKey, .encryptionStart, .encryptionRejected: return true
        default: return false
        }
    }

    var isPHYUpdate: Bool {
        if case .phyUpdate = self { return true }
        return false
    }
}

/// What the central's host gave LE Enable Encryption (Core 6.0, Vol 4, Part E, 7.8.24): the
/// Rand and EDIV the peripheral's host gets to find its key, and the central's key.
struct EncryptionRequest: Sendable, Equatable {
    var randomNumber: UInt64
    var encryptedDiversifier: UInt16
    /// 16 octets, least significant first.
    var longTermKey: [UInt8]
}

/// One LE connection between two controllers of the link: both ends, the timing of its
/// connection events, the data in flight each way and the procedures under way. A plain
/// value; the simulation runs its connection events.
struct LinkConnection: Sendable {
    /// One side of the connection.
    struct End: Sendable {
        var controller: ControllerID
        var handle: UInt16
        /// The address this side used, as its peer reports it.
        var address: DeviceAddress
        /// `false` once this side's controller was reset or removed: it no longer answers,
        /// and its peer finds out by supervision timeout.
        var isAlive = true
        /// What this side's host asked for with LE Set Data Length (or its default).
        var preferredTxOctets: UInt16
        /// connMaxRxOctets: the most this side can receive.
        var maximumRxOctets: UInt16
        /// The PHY this side transmits on.
        var txPHY: LEPhy = .le1M
        /// connEffectiveMaxTxOctets of this side's transmissions.
        var txOctets: UInt16 = 27
    }

    /// An LL_TERMINATE_IND waiting to be acknowledged.
    struct Termination: Sendable {
        var initiator: ConnectionRole
        var reason: HCIStatus
    }

    let id: LinkConnectionID
    var central: End
    var peripheral: End
    var parameters: LinkParameters
    /// connEventCounter of the next event.
    var eventCounter = 0
    /// The anchor point of the next connection event.
    var nextAnchor: Duration
    /// When a packet last got through (the supervision timer restarts then).
    var lastHeard: Duration
    /// A packet got through at least once (Core 6.0, Vol 6, Part B, 4.5.2).
    var isEstablished = false
    var timer: TimerID?
    var toPeripheral = LinkDataQueue()
    var toCentral = LinkDataQueue()
    var procedures: [LLProcedure] = []
    var termination: Termination?
    /// The long term key the link is encrypted with (both ends agreed on it), `nil` while
    /// it is not encrypted. Kept for the encryption restart (Core 6.0, Vol 6, Part B, 5.1.3.2).
    var encryptionKey: [UInt8]?

    init(id: LinkConnectionID, central: End, peripheral: End, parameters: LinkParameters, firstAnchor: Duration, createdAt: Duration) {
        self.id = id
        self.central = central
        self.peripheral = peripheral
        self.parameters = parameters
        nextAnchor = firstAnchor
        lastHeard = createdAt
    }

    func end(_ role: ConnectionRole) -> End { role == .central ? central : peripheral }

    mutating func updateEnd(_ role: ConnectionRole, _ change: (inout End) -> Void) {
        if role == .central { change(&central) } else { change(&peripheral) }
    }

    /// The role `controller` plays on this connection.
    func role(of controller: ControllerID) -> ConnectionRole? {
        if central.controller == controller { return .central }
        if peripheral.controller == controller { return .peripheral }
        return nil
    }

    /// The data `role` sends.
    mutating func updateOutgoing(from role: ConnectionRole, _ change: (inout LinkDataQueue) -> Void) {
        if role == .central { change(&toPeripheral) } else { change(&toCentral) }
    }

    /// The data length each side transmits with: what it prefers, capped by what its peer
    /// can receive (Core 6.0, Vol 6, Part B, 4.5.10).
    mutating func negotiateDataLength() -> Bool {
        let central = min(self.central.preferredTxOctets, peripheral.maximumRxOctets)
        let peripheral = min(self.peripheral.preferredTxOctets, self.central.maximumRxOctets)
        defer {
            self.central.txOctets = central
            self.peripheral.txOctets = peripheral
        }
        return central != self.central.txOctets || peripheral != self.peripheral.txOctets
    }

}

/// The opposite role.
extension ConnectionRole {
    var peer: ConnectionRole { self == .central ? .peripheral : .central }
}
