import BluetoothCore
import BluetoothHCI
import Synchronization

/// One LE connection, in either role. Thread-safe; its operations go through the `Host`.
public final class Connection: Sendable, Hashable, CustomStringConvertible {
    public let handle: UInt16
    /// The peer's address over the air, as the link was made (the one SMP's c1 and f5 use).
    public let peer: DeviceAddress
    /// The peer's identity address when ``peer`` is a resolvable private address that a bond's
    /// IRK resolved (or the controller resolved) as the link came up, or once the peer
    /// distributed its identity in a bonding pairing on this link; `nil` otherwise.
    public var identity: DeviceAddress? { state.withLock { $0.identity } }
    /// This device's address on the link, over the air: the public address, or the random
    /// address it advertised or connected from (SMP's c1 and f5 take it). On a link that came
    /// through an advertising set, the set's own random address, known from the set's LE
    /// Advertising Set Terminated, which follows the connection's event.
    public var local: DeviceAddress { state.withLock { $0.local } }
    /// This device's role on the connection.
    public let role: ConnectionRole
    /// The GATT client of this connection: what the peer's server offers.
    public let gatt: GATTClient
    public let host: LEHost
    /// L2CAP's part of the link: its ATT bearer (``gatt``'s) and credit-based channels, made on
    /// the transport's reader thread and closed there at Disconnection Complete (or by the
    /// host actor's `endLink` when the host gives the link up).
    let link: L2CAPLink

    private struct State: Sendable {
        var parameters: ConnectionParameters
        var disconnectReason: HCIStatus?
        var disconnectWaiters: [UInt64: CheckedContinuation<HCIStatus, any Error>] = [:]
        var nextWaiterID: UInt64 = 0
        var dataLength = DataLength.initial
        var phy = ConnectionPHY.le1M
        var identity: DeviceAddress?
        var local: DeviceAddress
    }

    private let state: Mutex<State>
    /// The listeners of ``linkUpdates()``.
    let linkChanges = AsyncStreamFanOut<LinkChange>(bufferLimit: 64)

    init(handle: UInt16, peer: DeviceAddress, identity: DeviceAddress? = nil, local: DeviceAddress, role: ConnectionRole,
         parameters: ConnectionParameters, link: L2CAPLink, gatt: GATTClient, host: LEHost) {
        self.handle = handle
        self.link = link
        self.peer = peer
        self.role = role
        self.gatt = gatt
        self.host = host
        state = Mutex(State(parameters: parameters, identity: identity, local: local))
    }

    /// Who the peer is: its ``identity`` when known, else its address (public or random).
    public var peerIdentity: DeviceAddress { identity ?? DeviceAddress(peer.address, type: peer.type.base) }

    public var parameters: ConnectionParameters { state.withLock { $0.parameters } }
    public var isConnected: Bool { disconnectReason == nil }
    /// Why the connection ended, once it has. Known from the controller's Disconnection
    /// Complete on: the transport's thread closes the ATT bearer with it before the host actor
    /// handles the event, and what already failed with the link must not find it still up.
    public var disconnectReason: HCIStatus? {
        if let reason = state.withLock({ $0.disconnectReason }) { return reason }
        if case let .disconnected(reason)? = gatt.bearer.closedError { return reason }
        return nil
    }
    /// The longest LE data PDU payload the controller sends on this link.
    public var maximumTxOctets: UInt16 { dataLength.maxTxOctets }
    /// The longest LL data PDUs each way, as the controller last reported them (27 octets
    /// until a data length update).
    public var dataLength: DataLength { state.withLock { $0.dataLength } }
    /// The PHYs in effect, as the controller last reported them (LE 1M until a PHY update).
    public var phy: ConnectionPHY { state.withLock { $0.phy } }
    /// The link's encryption, as the controller last reported it.
    public var security: LinkSecurity { gatt.bearer.security }

    /// Disconnects and returns when the controller reports the link closed.
    /// Does nothing if the connection has already ended.
    public func disconnect(reason: HCIStatus = .remoteUserTerminatedConnection) async throws {
        try await host.disconnect(self, reason: reason)
    }

    /// Returns the reason once the connection has ended (at once if it already has). Throws
    /// ``HostError/cancelled`` when the waiting task is cancelled (the connection goes on).
    public func waitForDisconnection() async throws -> HCIStatus {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = state.withLock { state -> Result<HCIStatus, HostError>? in
                    if let reason = state.disconnectReason { return .success(reason) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.disconnectWaiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.disconnectWaiters.removeValue(forKey: id) }
            waiter?.resume(throwing: HostError.cancelled)
        }
    }

    /// Reads the signal strength of the link, in dBm.
    public func readRSSI() async throws -> Int8 {
        try await host.readRSSI(self)
    }

    /// Asks the controller for new connection parameters; returns once they apply. As the
    /// central the controller runs the update (LE Connection Update); as the peripheral the
    /// host asks the central (L2CAP Connection Parameter Update Request). A refusal is
    /// ``HostError/linkProcedureRefused(_:)``.
    public func updateParameters(intervalRange: ClosedRange<UInt16>, peripheralLatency: UInt16, supervisionTimeout: UInt16) async throws -> ConnectionParameters {
        try await host.updateParameters(self, intervalRange: intervalRange, peripheralLatency: peripheralLatency, supervisionTimeout: supervisionTimeout)
    }

    /// Asks for connection parameters by preference or preset (``ConnectionParameterPreference/lowLatency``,
    /// ``ConnectionParameterPreference/balanced``, ``ConnectionParameterPreference/lowPower``);
    /// returns the parameters in effect once they apply.
    public func updateParameters(_ preference: ConnectionParameterPreference) async throws -> ConnectionParameters {
        try await updateParameters(intervalRange: preference.intervalRange, peripheralLatency: preference.peripheralLatency,
                                   supervisionTimeout: preference.supervisionTimeout)
    }

    /// Asks for other PHYs (LE Set PHY) and returns the PHYs in effect after LE PHY Update
    /// Complete; see ``LEHost`` for the errors (a refusal is ``HostError/linkProcedureRefused(_:)``).
    public func setPHY(_ preference: PHYPreference) async throws -> ConnectionPHY {
        try await host.setPHY(self, preference)
    }

    /// Reads the PHYs in effect from the controller (LE Read PHY).
    public func readPHY() async throws -> ConnectionPHY {
        try await host.readPHY(self)
    }

    /// Asks for longer LL data PDUs (LE Set Data Length); `nil` asks for the controller's
    /// maximum. Returns the data length in effect.
    public func setDataLength(octets: UInt16? = nil, time: UInt16? = nil) async throws -> DataLength {
        try await host.setDataLength(self, octets: octets, time: time)
    }

    /// The changes of PHY, data length and connection parameters from now on, as the
    /// controller reports them (whoever started them). Ends when the connection does; a
    /// consumer that falls 64 changes behind loses the oldest.
    public func linkUpdates() -> AsyncStream<LinkChange> {
        linkChanges.makeStream()
    }

    public var description: String { "connection \(Hex.format(handle)) to \(peer) as \(role)" }

    public static func == (lhs: Connection, rhs: Connection) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: Updated by the host

    /// Each returns whether the value changed.
    @discardableResult
    func update(parameters: ConnectionParameters) -> Bool {
        state.withLock { state in
            defer { state.parameters = parameters }
            return state.parameters != parameters
        }
    }
    @discardableResult
    func update(dataLength: DataLength) -> Bool {
        state.withLock { state in
            defer { state.dataLength = dataLength }
            return state.dataLength != dataLength
        }
    }
    @discardableResult
    func update(phy: ConnectionPHY) -> Bool {
        state.withLock { state in
            defer { state.phy = phy }
            return state.phy != phy
        }
    }
    func update(identity: DeviceAddress) { state.withLock { $0.identity = identity } }
    func update(local: DeviceAddress) { state.withLock { $0.local = local } }

    func markDisconnected(reason: HCIStatus) {
        let waiters = state.withLock { state -> [CheckedContinuation<HCIStatus, any Error>] in
            guard state.disconnectReason == nil else { return [] }
            state.disconnectReason = reason
            defer { state.disconnectWaiters.removeAll() }
            return Array(state.disconnectWaiters.values)
        }
        linkChanges.finish()
        waiters.forEach { $0.resume(returning: reason) }
    }
}
