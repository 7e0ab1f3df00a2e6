import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import Synchronization

/// Sits between a host and its transport: records the commands the host sends and drops the
/// controller's events a test chooses.
public final class FilteringTransport: HCITransport {
    /// A command the host sent or an event it received, in the order they passed.
    public enum Traffic: Sendable {
        case sent(HCIOpcode)
        case received(HCIEvent)
        /// The host closed the transport.
        case closed
    }

    private struct State {
        var dropsIncoming: @Sendable (HCIEvent) -> Bool = { _ in false }
        var holdsIncoming: @Sendable (HCIEvent) -> Bool = { _ in false }
        /// From the first event it matches on, everything (events and data) is held.
        var holdsFrom: @Sendable (HCIEvent) -> Bool = { _ in false }
        var holdsEverything = false
        var refusing: (opcode: HCIOpcode, status: HCIStatus, left: Int)?
        var refusalsMade = 0
        var held: [H4Packet] = []
        var receiver: (@Sendable (TransportEvent) -> Void)?
        var traffic: [Traffic] = []
    }

    private let inner: any HCITransport
    private let state = Mutex(State())

    public init(_ inner: any HCITransport) { self.inner = inner }

    public var name: String { inner.name }

    /// The commands sent and the events delivered so far, in order.
    public var traffic: [Traffic] { state.withLock { $0.traffic } }

    /// The opcodes of the commands sent so far, in order.
    public var sentCommands: [HCIOpcode] {
        traffic.compactMap { if case let .sent(opcode) = $0 { return opcode } else { return nil } }
    }

    /// From now on, events for which `drops` is true never reach the host.
    public func dropIncoming(_ drops: @escaping @Sendable (HCIEvent) -> Bool) {
        state.withLock { $0.dropsIncoming = drops }
    }

    /// From now on, the controller's answers (Command Complete) to the next `times` commands of
    /// `opcode` reach the host as refusals with `status` and no other return parameter. The
    /// controller still carried each command out: this tries the host's handling of a
    /// refusal, not a controller that truly refuses. Answers dropped or held are not refused
    /// (nor counted), nor are those handed over by ``releaseHeld()`` or ``inject(_:)``.
    public func refuseCommands(_ opcode: HCIOpcode, status: HCIStatus = .commandDisallowed, times: Int = .max) {
        state.withLock { $0.refusing = (opcode, status, times) }
    }

    /// How many answers ``refuseCommands(_:status:times:)`` turned into refusals so far.
    public var refusalsMade: Int { state.withLock { $0.refusalsMade } }

    /// From now on, events for which `holds` is true wait until ``releaseHeld()``.
    public func holdIncoming(_ holds: @escaping @Sendable (HCIEvent) -> Bool) {
        state.withLock { $0.holdsIncoming = holds }
    }

    /// From the first event for which `holds` is true, everything the controller sends (events
    /// and ACL data, in order) waits until ``releaseHeld()``, which hands it all over as one
    /// batch, as a transport reads what arrived meanwhile.
    public func holdEverything(from holds: @escaping @Sendable (HCIEvent) -> Bool) {
        state.withLock { $0.holdsFrom = holds }
    }

    /// The packets held so far, in order.
    public var held: [H4Packet] { state.withLock { $0.held } }

    /// Hands `packets` to the host as if the controller had sent them now (one batch).
    public func inject(_ packets: [H4Packet]) {
        let receiver = state.withLock { state in
            for packet in packets { if let event = try? HCIEvent.decode(packet.bytes) { state.traffic.append(.received(event)) } }
            return state.receiver
        }
        receiver?(.packets(packets))
    }

    /// Delivers the held events, in order, and holds no more.
    public func releaseHeld() {
        let (held, receiver) = state.withLock { state in
            defer {
                state.held = []
                state.holdsIncoming = { _ in false }
                state.holdsFrom = { _ in false }
                state.holdsEverything = false
            }
            for packet in state.held { if let event = try? HCIEvent.decode(packet.bytes) { state.traffic.append(.received(event)) } }
            return (state.held, state.receiver)
        }
        if !held.isEmpty { receiver?(.packets(held)) }
    }

    /// Whether the host closed the transport.
    public var isClosed: Bool { traffic.contains { if case .closed = $0 { return true } else { return false } } }

    public func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        state.withLock { $0.receiver = receiver }
        inner.start { [self] event in
            guard case let .packets(packets) = event else { return receiver(event) }
            let kept = state.withLock { state in
                packets.compactMap { packet -> H4Packet? in
                    if !state.holdsEverything, packet.indicator == .event, let event = try? HCIEvent.decode(packet.bytes),
                       state.holdsFrom(event) {
                        state.holdsEverything = true
                    }
                    if state.holdsEverything {
                        state.held.append(packet)
                        return nil
                    }
                    guard packet.indicator == .event, let event = try? HCIEvent.decode(packet.bytes) else { return packet }
                    if state.dropsIncoming(event) { return nil }
                    if state.holdsIncoming(event) {
                        state.held.append(packet)
                        return nil
                    }
                    if case let .commandComplete(complete) = event, let refusing = state.refusing,
                       complete.opcode == refusing.opcode, refusing.left > 0 {
                        state.refusing?.left -= 1
                        state.refusalsMade += 1
                        let refusal = HCIEvent.commandComplete(CommandCompleteEvent(
                            numberOfHCICommandPackets: complete.numberOfHCICommandPackets, opcode: complete.opcode,
                            returnParameters: [refusing.status.rawValue]))
                        state.traffic.append(.received(refusal))
                        return H4Packet(.event, refusal.encode())
                    }
                    state.traffic.append(.received(event))
                    return packet
                }
            }
            if !kept.isEmpty { receiver(.packets(kept)) }
        }
    }

    public func send(_ packet: H4Packet) throws(TransportError) {
        if packet.indicator == .command, packet.bytes.count >= 2 {
            let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
            state.withLock { $0.traffic.append(.sent(opcode)) }
        }
        try inner.send(packet)
    }

    public func close() {
        state.withLock { $0.traffic.append(.closed) }
        inner.close()
    }
}
