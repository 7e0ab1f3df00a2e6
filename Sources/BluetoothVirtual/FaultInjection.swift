import BluetoothCore
import BluetoothHCI

/// What happens to ACL packets singled out by ``VirtualController/injectACLFault(_:count:connectionHandle:direction:)``.
public enum ACLFault: Sendable, Equatable, CustomStringConvertible {
    /// The packet is not acknowledged `attempts` times, so the link layer sends it again in
    /// the following connection events: it arrives late but in order, as on a real radio
    /// where lost PDUs are retransmitted (Core 6.0, Vol 6, Part B, 4.5.9).
    case lose(attempts: Int)
    /// The packet (and everything behind it on the connection) waits this long before it
    /// goes on the air, counted from the event it was first due in.
    case delay(Duration)
    /// The packet vanishes: the sender's controller counts it as sent, the receiver never
    /// gets it. No real link layer does this; it is for tests that want a desynchronised
    /// upper layer.
    case drop

    /// One lost transmission, retransmitted in the next connection event.
    public static let lose = ACLFault.lose(attempts: 1)

    public var description: String {
        switch self {
        case let .lose(attempts): return "lose (\(attempts) retransmission\(attempts == 1 ? "" : "s"))"
        case let .delay(duration): return "delay \(duration)"
        case .drop: return "drop"
        }
    }
}

/// Which way ACL data flows, seen from one controller.
public enum ACLDirection: Sendable, Hashable {
    /// From this controller's host to the peer.
    case outgoing
    /// From the peer to this controller's host.
    case incoming
}

/// How an advertiser answers connection requests (``VirtualController/connectionAcceptance``).
public enum ConnectionAcceptance: Sendable, Hashable {
    /// Connect requests are accepted, as normal.
    case accept
    /// Connect requests are ignored: the initiator keeps trying until its host cancels
    /// (LE Create Connection Cancel) or its own timeout.
    case ignore
    /// The connect request is sent, but the advertiser never shows up on the new connection:
    /// after 6 connection intervals the initiator's host gets LE Connection Complete with
    /// Connection Failed to be Established (0x3E) (Core 6.0, Vol 6, Part B, 4.5.2).
    case failToEstablish
}

// MARK: - Faults on a controller

extension VirtualController {
    /// How this controller answers connection requests while it advertises.
    public var connectionAcceptance: ConnectionAcceptance {
        link.read { $0.controllers[id]?.acceptance ?? .accept }
    }

    /// Makes the advertiser accept, ignore, or silently fail connection requests.
    public func setConnectionAcceptance(_ acceptance: ConnectionAcceptance) {
        link.performSync { $0.controllers[id]?.acceptance = acceptance }
    }

    /// Drops a connection now, as if the radio link broke: both hosts get Disconnection
    /// Complete with `reason` (Connection Timeout, 0x08, by default). Returns `false` when
    /// `handle` names no connection of this controller.
    @discardableResult
    public func dropConnection(handle: UInt16, reason: HCIStatus = .connectionTimeout) -> Bool {
        link.performSync { simulation in
            guard let (connection, _) = simulation.connection(handle, of: id) else { return false }
            simulation.close(connection.id, reasons: [.central: reason, .peripheral: reason])
            return true
        }
    }

    /// Drops every connection of this controller now (see ``dropConnection(handle:reason:)``).
    public func dropAllConnections(reason: HCIStatus = .connectionTimeout) {
        for handle in connectionHandles { dropConnection(handle: handle, reason: reason) }
    }

    /// Applies `fault` to the next `count` ACL packets that go over the air on a connection,
    /// in one direction. Returns `false` when `handle` names no connection of this controller.
    @discardableResult
    public func injectACLFault(_ fault: ACLFault, count: Int = 1, connectionHandle handle: UInt16, direction: ACLDirection) -> Bool {
        link.performSync { simulation in
            guard let (connection, role) = simulation.connection(handle, of: id) else { return false }
            let sender = direction == .outgoing ? role : role.peer
            simulation.connections[connection.id]?.updateOutgoing(from: sender) { $0.addFault(fault, count: count) }
            return true
        }
    }

    /// A fault inside the controller, seen from outside: its host gets a Hardware Error event
    /// (Core 6.0, Vol 4, Part E, 7.7.16) and the controller resets. Its connections drop:
    /// peers lose them by supervision timeout; with `reportsDisconnections` the host also
    /// gets Disconnection Complete (Hardware Failure, 0x03) for each, so that a host that
    /// does not reset after the error still learns they are gone.
    public func simulateHardwareError(code: UInt8 = 0x01, reportsDisconnections: Bool = true) {
        link.performSync { simulation in
            simulation.emit(.hardwareError(HardwareErrorEvent(hardwareCode: code)), to: id)
            if reportsDisconnections, let handles = simulation.controllers[id]?.connections.keys.sorted() {
                for handle in handles {
                    simulation.emit(.disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: handle, reason: .hardwareFailure)), to: id)
                }
            }
            simulation.reset(id)
        }
    }

    /// Resets the controller as HCI Reset would, without telling its host: advertising,
    /// scanning and connections stop (peers time out). ``VirtualControllerServer`` does this
    /// when its client leaves.
    public func reset() {
        link.performSync { $0.reset(id) }
    }
}

extension VirtualLink {
    /// Drops the connection between two controllers now: both hosts get Disconnection
    /// Complete with `reason`. Returns `false` when they are not connected.
    @discardableResult
    public func dropConnection(between first: VirtualController, and second: VirtualController, reason: HCIStatus = .connectionTimeout) -> Bool {
        performSync { simulation in
            let id = simulation.connections.values.first { connection in
                Set([connection.central.controller, connection.peripheral.controller]) == Set([first.id, second.id])
            }?.id
            guard let id else { return false }
            simulation.close(id, reasons: [.central: reason, .peripheral: reason])
            return true
        }
    }
}
