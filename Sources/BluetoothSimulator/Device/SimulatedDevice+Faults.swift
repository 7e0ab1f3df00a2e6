import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual

extension SimulatedDevice {
    // MARK: Requests

    /// Makes the next `count` reads or writes (see `kinds`) of a characteristic, or of any
    /// when `characteristic` is `nil`, fail as `failure` says. Failures asked for earlier are
    /// used first.
    public func failNextRequests(_ failure: SimulatedFailure, count: Int = 1, on characteristic: BluetoothUUID? = nil,
                                 kinds: SimulatedRequestKinds = .all) {
        state.withLock { $0.failures.add(failure, count: count, characteristic: characteristic, kinds: kinds) }
    }

    /// Forgets the failures not yet used.
    public func clearInjectedFailures() {
        state.withLock { $0.failures.removeAll() }
    }

    /// How many requests still have an injected failure waiting for them.
    public var pendingInjectedFailures: Int { state.withLock { $0.failures.pendingCount } }

    /// Answers reads and writes of a characteristic this much later; with `characteristic`
    /// `nil`, of every characteristic that has no delay of its own.
    public func setResponseDelay(_ delay: Duration, for characteristic: BluetoothUUID? = nil) {
        state.withLock { state in
            if let characteristic { state.delays[characteristic] = delay } else { state.defaultDelay = delay }
        }
    }

    // MARK: Links

    /// Ends every link now. On a virtual controller it is a radio loss: both sides get
    /// Disconnection Complete with `reason` (Connection Timeout by default). Elsewhere the
    /// peripheral disconnects (Remote User Terminated Connection).
    public func dropAllLinks(reason: HCIStatus = .connectionTimeout) async {
        if let controller {
            controller.dropAllConnections(reason: reason)
            return
        }
        for connection in await host.connections where connection.role == .peripheral {
            try? await connection.disconnect()
        }
    }

    /// Ends one link (see ``dropAllLinks(reason:)``).
    func drop(connectionHandle: UInt16, reason: HCIStatus) async {
        if let controller {
            controller.dropConnection(handle: connectionHandle, reason: reason)
            return
        }
        for connection in await host.connections where connection.handle == connectionHandle {
            try? await connection.disconnect()
        }
    }

    /// How it answers connection requests: `.accept`, `.ignore` (the central's attempt
    /// times out) or `.failToEstablish` (the central gets Connection Failed to be
    /// Established, 0x3E).
    public func setConnectionAcceptance(_ acceptance: ConnectionAcceptance) throws(SimulatorError) {
        try requireController("refusing connections").setConnectionAcceptance(acceptance)
    }

    /// Applies an ACL fault to the next `count` packets of every link, in one direction seen
    /// from the peripheral: `.lose` (retransmitted later, in order), `.delay`, `.drop`
    /// (vanishes: the upper layers desynchronise). Returns how many links it applied to.
    @discardableResult
    public func injectACLFault(_ fault: ACLFault, count: Int = 1, direction: ACLDirection) throws(SimulatorError) -> Int {
        let controller = try requireController("ACL faults")
        return controller.connectionHandles.filter { controller.injectACLFault(fault, count: count, connectionHandle: $0, direction: direction) }.count
    }

    // MARK: Position

    /// Where it is, in metres; `nil` off a virtual link.
    public var position: VirtualPosition? { controller?.position }

    /// Moves it. Scanners beyond its range stop hearing it; a link that no longer gets
    /// through ends at its supervision timeout.
    public func move(to position: VirtualPosition) throws(SimulatorError) {
        try requireController("moving").move(to: position)
    }

    /// Moves it far beyond the range of any other device on the link.
    public func moveOutOfRange() throws(SimulatorError) {
        try move(to: Self.farAway)
    }

    /// Moves it back to its declared position.
    public func moveIntoRange() throws(SimulatorError) {
        try move(to: declaration.position)
    }

    /// Whether it and `other` hear each other now.
    public func isInRange(of other: VirtualController) -> Bool {
        guard let controller else { return false }
        return controller.link.inRange(controller, other)
    }

    /// 1000 km away: beyond the range of any radio model a test would use.
    static let farAway = VirtualPosition(x: 1_000_000, y: 0)

    private func requireController(_ what: String) throws(SimulatorError) -> VirtualController {
        guard let controller else { throw .notVirtual(what) }
        return controller
    }
}
