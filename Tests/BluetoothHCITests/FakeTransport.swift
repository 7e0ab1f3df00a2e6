import BluetoothCore
import BluetoothTransport
import Dispatch
import Synchronization
@testable import BluetoothHCI

/// An ``HCITransport`` whose controller is a script: every packet the host writes is
/// recorded in ``written`` and handed to ``respond`` (set by the test), whose answers are
/// delivered to the host on a serial queue, never from inside `send` (as the transport
/// contract requires). Tests can also inject packets and close the transport.
final class FakeTransport: HCITransport {
    typealias Responder = @Sendable (H4Packet) -> [H4Packet]

    private struct State {
        var receiver: (@Sendable (TransportEvent) -> Void)?
        var responder: Responder = { _ in [] }
        var isClosed = false
        /// ACL packets written and not yet given back by a delivered Number Of Completed Packets.
        var aclOutstanding = 0
        var maximumACLOutstanding = 0
    }

    let name = "fake"
    /// Every packet the host wrote, in order.
    let written = AwaitableLog<H4Packet>()
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "bluejay.tests.fake-controller")

    init(respond: @escaping Responder = { _ in [] }) {
        state.withLock { $0.responder = respond }
    }

    /// Replaces the controller script.
    func respond(_ responder: @escaping Responder) {
        state.withLock { $0.responder = responder }
    }

    /// The most ACL packets the host ever had in the controller's buffers at once (as the
    /// controller counts them: a buffer is free once its Number Of Completed Packets is sent).
    var maximumACLOutstanding: Int { state.withLock { $0.maximumACLOutstanding } }

    func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        state.withLock { $0.receiver = receiver }
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        let outcome = state.withLock { state -> Result<[H4Packet], TransportError> in
            if state.isClosed { return .failure(.closed(name)) }
            if packet.indicator == .acl {
                state.aclOutstanding += 1
                state.maximumACLOutstanding = max(state.maximumACLOutstanding, state.aclOutstanding)
            }
            return .success(state.responder(packet))
        }
        let answers = try outcome.get()
        written.append(packet)
        deliver(answers)
    }

    func close() {
        let wasOpen = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        if wasOpen { deliverClosed(nil) }
    }

    // MARK: Scripting

    /// Delivers packets to the host as if the controller sent them, in order.
    func deliver(_ packets: [H4Packet]) {
        guard !packets.isEmpty else { return }
        queue.async { [self] in
            for packet in packets {
                let receiver = state.withLock { state -> (@Sendable (TransportEvent) -> Void)? in
                    if packet.indicator == .event, case let .numberOfCompletedPackets(completed)? = try? HCIEvent.decode(packet.bytes) {
                        state.aclOutstanding -= completed.entries.reduce(0) { $0 + Int($1.completedPackets) }
                    }
                    return state.receiver
                }
                receiver?(.packets([packet]))
            }
        }
    }

    func deliver(_ event: HCIEvent) { deliver([H4Packet(.event, event.encode())]) }

    /// Delivers packets to the host as one read of the transport (one batch).
    func deliverBatch(_ packets: [H4Packet]) {
        queue.async { [self] in
            state.withLock { $0.receiver }?(.packets(packets))
        }
    }

    /// The transport fails (the device went away): the host is told once.
    func fail(_ error: TransportError) {
        let wasOpen = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        if wasOpen { deliverClosed(error) }
    }

    private func deliverClosed(_ error: TransportError?) {
        queue.async { [self] in
            state.withLock { $0.receiver }?(.closed(error))
        }
    }
}

// MARK: Controller answers

extension H4Packet {
    /// A Command Complete carrying a command's successful return parameters.
    static func complete<C: HCICommand>(_ command: C.Type, _ returnParameters: C.ReturnParameters, credits: UInt8 = 1) -> H4Packet {
        event(.commandComplete(CommandCompleteEvent(numberOfHCICommandPackets: credits, opcode: C.opcode,
                                                    returnParameters: returnParameters.encodeWithSuccessStatus())))
    }

    /// A Command Complete with raw return parameters (status octet first).
    static func complete(_ opcode: HCIOpcode, returnParameters: [UInt8], credits: UInt8 = 1) -> H4Packet {
        event(.commandComplete(CommandCompleteEvent(numberOfHCICommandPackets: credits, opcode: opcode, returnParameters: returnParameters)))
    }

    static func status(_ opcode: HCIOpcode, _ status: HCIStatus = .success, credits: UInt8 = 1) -> H4Packet {
        event(.commandStatus(CommandStatusEvent(status: status, numberOfHCICommandPackets: credits, opcode: opcode)))
    }

    static func event(_ event: HCIEvent) -> H4Packet { H4Packet(.event, event.encode()) }

    static func completedPackets(handle: UInt16, count: UInt16) -> H4Packet {
        event(.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(entries: [.init(connectionHandle: handle, completedPackets: count)])))
    }

    /// The command packet's opcode, if this is a command.
    var commandOpcode: HCIOpcode? {
        guard indicator == .command, let packet = try? HCICommandPacket.decode(bytes) else { return nil }
        return packet.opcode
    }

    /// The ACL data packet, if this is one.
    var aclPacket: ACLDataPacket? {
        guard indicator == .acl else { return nil }
        return try? ACLDataPacket.decode(bytes)
    }
}

extension Array where Element == H4Packet {
    var commandOpcodes: [HCIOpcode] { compactMap(\.commandOpcode) }
    var aclPackets: [ACLDataPacket] { compactMap(\.aclPacket) }
}

/// Collects what an ``HCIController`` hands up on `inbound`, for tests to wait on.
func recordInbound(of controller: HCIController) -> AwaitableLog<HCIInbound> {
    let log = AwaitableLog<HCIInbound>()
    Task {
        for await item in controller.inbound { log.append(item) }
    }
    return log
}

extension HCIInbound {
    var receivedEvent: HCIEvent? {
        if case let .event(event) = self { return event }
        return nil
    }

    var receivedPDU: (handle: UInt16, pdu: [UInt8])? {
        if case let .l2cap(handle, pdu) = self { return (handle, Array(pdu)) }
        return nil
    }

    var isTransportClosed: Bool {
        if case .transportClosed = self { return true }
        return false
    }
}
