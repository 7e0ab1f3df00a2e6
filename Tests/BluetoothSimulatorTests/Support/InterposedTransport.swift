import BluetoothCore
import BluetoothTransport
import BluetoothVirtual
import Dispatch
import Synchronization

/// An HCI transport between a host and a virtual controller that a test can break at an
/// exact point: it watches every packet the host sends, and the first ATT PDU a trigger names
/// (by opcode and occurrence) is held back while the trigger's fault runs. So a fault always
/// lands while that request (or confirmation) is in flight, however fast or slow the machine.
///
/// It can also close itself as a broken socket would (``breakTransport()``), and stop passing
/// HCI commands to the controller (``silenceCommands(_:)``): a controller that no longer answers.
final class InterposedTransport: HCITransport {
    /// A fault armed on the host's next ATT PDUs.
    private struct Trigger {
        var opcodes: Set<UInt8>
        /// How many more matching PDUs pass before the one that fires.
        var skip: Int
        var fault: @Sendable () -> Void
    }

    private struct State {
        var receiver: (@Sendable (TransportEvent) -> Void)?
        var trigger: Trigger?
        var isBroken = false
        var silencesCommands = false
        var commandsSwallowed = 0
    }

    let inner: VirtualControllerTransport
    private let state = Mutex(State())
    /// One entry per fault that fired, naming the ATT opcode it held back.
    let fired = AwaitableLog<UInt8>()
    /// The opcode of every ATT PDU the host sent on (not held back), in order.
    let sentATT = AwaitableLog<UInt8>()

    init(_ inner: VirtualControllerTransport) {
        self.inner = inner
    }

    var name: String { inner.name }

    func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        state.withLock { $0.receiver = receiver }
        inner.start { [weak self] event in
            guard let self else { return }
            switch event {
            case .packets:
                guard !self.state.withLock({ $0.isBroken }) else { return }
                receiver(event)
            case let .closed(reason):
                let broken = self.state.withLock { $0.isBroken }
                receiver(.closed(broken ? TransportError.connectionLost(self.name, reason: "broken by the test") : reason))
            }
        }
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        enum Verdict { case forward, swallow(@Sendable () -> Void, UInt8?), drop }
        let verdict = try state.withLock { state throws(TransportError) -> Verdict in
            if state.isBroken { throw .connectionLost(name, reason: "broken by the test") }
            if packet.indicator == .command, state.silencesCommands {
                state.commandsSwallowed += 1
                return .drop
            }
            guard var trigger = state.trigger, let opcode = Self.attOpcode(of: packet), trigger.opcodes.contains(opcode) else { return .forward }
            if trigger.skip > 0 {
                trigger.skip -= 1
                state.trigger = trigger
                return .forward
            }
            state.trigger = nil
            return .swallow(trigger.fault, opcode)
        }
        switch verdict {
        case .forward:
            try inner.send(packet)
            if let opcode = Self.attOpcode(of: packet) { sentATT.append(opcode) }
        case .drop:
            break
        case let .swallow(fault, opcode):
            // Not from inside `send` (the host may hold its locks): the PDU is held back, so it
            // is still in flight whenever the fault lands.
            DispatchQueue.global().async { fault() }
            if let opcode { fired.append(opcode) }
        }
    }

    func close() {
        inner.close()
    }

    // MARK: Faults

    /// Holds back the host's `occurrence`-th ATT PDU (1 is the next) with one of `opcodes`, and
    /// runs `fault` then.
    func arm(opcodes: Set<UInt8>, occurrence: Int = 1, fault: @escaping @Sendable () -> Void) {
        state.withLock { $0.trigger = Trigger(opcodes: opcodes, skip: max(0, occurrence - 1), fault: fault) }
    }

    /// The transport fails as a broken socket does: what the host writes fails, nothing more
    /// arrives, and the host is told the transport is lost.
    func breakTransport() {
        state.withLock { $0.isBroken = true }
        inner.close()
    }

    /// With `true`, HCI commands no longer reach the controller: it never answers them.
    func silenceCommands(_ silent: Bool) {
        state.withLock { $0.silencesCommands = silent }
    }

    /// How many commands were kept from the controller.
    var commandsSwallowed: Int { state.withLock { $0.commandsSwallowed } }

    /// The ATT opcode of an ACL packet from the host that starts an ATT PDU (Core 6.0,
    /// Vol 4, Part E, 5.4.2; Vol 3, Part A, 3.1).
    static func attOpcode(of packet: H4Packet) -> UInt8? {
        guard packet.indicator == .acl, packet.bytes.count >= 9 else { return nil }
        let bytes = Array(packet.bytes)
        let boundary = (bytes[1] >> 4) & 0x03
        guard boundary != 0x01 else { return nil }
        let channel = UInt16(bytes[6]) | UInt16(bytes[7]) << 8
        guard channel == 0x0004 else { return nil }
        return bytes[8]
    }
}
