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
    /// address it advertised or connected from (SMP's c1 and f5 take it).
    public let local: DeviceAddress
    /// This device's role on the connection.
    public let role: ConnectionRole
    /// The GATT client of this connection: what the peer's server offers.
    public let gatt: GATTClient
    public let host: LEHost

    private struct State: Sendable {
        var parameters: ConnectionParameters
        var disconnectReason: HCIStatus?
        var disconnectWaiters: [UInt64: CheckedContinuation<HCIStatus, any Error>] = [:]
        var nextWaiterID: UInt64 = 0
        var maximumTxOctets: UInt16 = 27
        var phy: (tx: LEPhy, rx: LEPhy) = (.le1M, .le1M)
        var identity: DeviceAddress?
    }

    private let state: Mutex<State>

    init(handle: UInt16, peer: DeviceAddress, identity: DeviceAddress? = nil, local: DeviceAddress, role: ConnectionRole,
         parameters: ConnectionParameters, gatt: GATTClient, host: LEHost) {
        self.handle = handle
        self.peer = peer
        self.local = local
        self.role = role
        self.gatt = gatt
        self.host = host
        state = Mutex(State(parameters: parameters, identity: identity))
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
    public var maximumTxOctets: UInt16 { state.withLock { $0.maximumTxOctets } }
    public var phy: (tx: LEPhy, rx: LEPhy) { state.withLock { $0.phy } }
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

    /// Asks the controller for new connection parameters; returns once they apply.
    public func updateParameters(intervalRange: ClosedRange<UInt16>, peripheralLatency: UInt16, supervisionTimeout: UInt16) async throws -> ConnectionParameters {
        try await host.updateParameters(self, intervalRange: intervalRange, peripheralLatency: peripheralLatency, supervisionTimeout: supervisionTimeout)
    }

    public var description: String { "connection \(Hex.format(handle)) to \(peer) as \(role)" }

    public static func == (lhs: Connection, rhs: Connection) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: Updated by the host

    func update(parameters: ConnectionParameters) { state.withLock { $0.parameters = parameters } }
    func update(maximumTxOctets: UInt16) { state.withLock { $0.maximumTxOctets = maximumTxOctets } }
    func update(phy: (tx: LEPhy, rx: LEPhy)) { state.withLock { $0.phy = phy } }
    func update(identity: DeviceAddress) { state.withLock { $0.identity = identity } }

    func markDisconnected(reason: HCIStatus) {
        let waiters = state.withLock { state -> [CheckedContinuation<HCIStatus, any Error>] in
            guard state.disconnectReason == nil else { return [] }
            state.disconnectReason = reason
            defer { state.disconnectWaiters.removeAll() }
            return Array(state.disconnectWaiters.values)
        }
        waiters.forEach { $0.resume(returning: reason) }
    }
}
