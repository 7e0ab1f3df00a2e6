import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import Dispatch
import FuzzSupport
import Synchronization

/// L2CAP signalling and the Security Manager, as a connected peer feeds them: an ``LEHost`` on
/// a scripted controller, with one link up (as central or as peripheral), receives B-frames on
/// the LE signalling, SMP, ATT and other channels, whole or cut across ACL fragments. The host
/// never traps; it answers every signalling request exactly once, with the request's
/// identifier, and no response, reject or credit indication (Core 6.0, Vol 3, Part A, 4);
/// what it sends on SMP decodes and fits its role: a central never sends a Pairing Response
/// or a Security Request, a peripheral never a Pairing Request (Part H, 3.5). Since the
/// Security Manager pairs, a Pairing or Security Request may start a pairing (the agent
/// answers on a task of its own) rather than get Pairing Failed, so SMP answers are not
/// counted; FuzzPairing checks the pairing state machine. The link stays up.
///
/// Input: the role byte, then frames: a control byte (channel, whether to cut the frame in
/// two ACL fragments) and a chunk of payload each.

/// The controller: answers every command at once (Command Complete, or Command Status and the
/// event that follows), takes every ACL packet (Number Of Completed Packets), and records the
/// B-frames the host sends. Answers go out on a queue, never from inside `send`, as the
/// transport contract requires.
final class ScriptedController: HCITransport {
    let name = "fuzz"
    static let handle: UInt16 = 0x0040
    private let receiver = Mutex<(@Sendable (TransportEvent) -> Void)?>(nil)
    private let queue = DispatchQueue(label: "bluejay.fuzz.controller")
    /// B-frames the host sent on the link, as (channel, payload).
    let frames: AsyncStream<(L2CAPChannelID, [UInt8])>
    private let framesContinuation: AsyncStream<(L2CAPChannelID, [UInt8])>.Continuation
    let disconnects = Mutex(0)

    init() {
        (frames, framesContinuation) = AsyncStream.makeStream()
    }

    func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        self.receiver.withLock { $0 = receiver }
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        switch packet.indicator {
        case .command:
            guard let command = try? HCICommandPacket.decode(packet.bytes) else { fuzzFailure("the host sent a malformed command \(packet)") }
            deliver(answers(to: command))
        case .acl:
            guard let acl = try? ACLDataPacket.decode(packet.bytes) else { fuzzFailure("the host sent a malformed ACL packet \(packet)") }
            // Every reply of this target fits one fragment (the ACL buffers are 251 bytes).
            if acl.packetBoundary.startsPDU, let frame = try? L2CAPBasicFrame.decode(acl.data) {
                framesContinuation.yield((frame.channelID, frame.payload))
            }
            deliver([.numberOfCompletedPackets(.init(entries: [.init(connectionHandle: acl.connectionHandle, completedPackets: 1)]))])
        default:
            break
        }
    }

    /// Closes once: the host hears `.closed`, and the controller lets go of the host's receiver
    /// (as a real transport's reader thread ends), which would otherwise hold the host.
    func close() {
        framesContinuation.finish()
        queue.async { [self] in
            let receiver = self.receiver.withLock { receiver in
                defer { receiver = nil }
                return receiver
            }
            receiver?(.closed(nil))
        }
    }

    /// Delivers packets from the peer, as one batch.
    func deliver(_ packets: [H4Packet]) {
        queue.async { [self] in receiver.withLock { $0 }?(.packets(packets)) }
    }

    private func deliver(_ events: [HCIEvent]) {
        deliver(events.map { H4Packet(.event, $0.encode()) })
    }

    private func answers(to command: HCICommandPacket) -> [HCIEvent] {
        let opcode = command.opcode
        if HCICommandCatalogue.commandType(for: opcode)?.acknowledgement == .commandStatus {
            var events: [HCIEvent] = [.commandStatus(.init(status: .success, numberOfHCICommandPackets: 1, opcode: opcode))]
            if opcode == DisconnectCommand.opcode {
                disconnects.withLock { $0 += 1 }
                events.append(.disconnectionComplete(.init(connectionHandle: Self.handle, reason: .connectionTerminatedByLocalHost)))
            } else if opcode == LEConnectionUpdateCommand.opcode, let update = try? LEConnectionUpdateCommand.decode(parameters: command.parameters) {
                events.append(.le(.connectionUpdateComplete(.init(
                    connectionHandle: update.connectionHandle, connectionInterval: update.connectionIntervalMax,
                    peripheralLatency: update.maxLatency, supervisionTimeout: update.supervisionTimeout))))
            }
            return events
        }
        let returnParameters: [UInt8]
        switch opcode {
        case LEReadBufferSizeCommand.opcode: returnParameters = [0x00, 251, 0x00, 8]
        case ReadBDADDRCommand.opcode: returnParameters = [0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
        // Return parameters that lead with the connection handle echo it, so that the
        // controller matches them to their command.
        case LELongTermKeyRequestNegativeReplyCommand.opcode, LERemoteConnectionParameterRequestReplyCommand.opcode,
             LERemoteConnectionParameterRequestNegativeReplyCommand.opcode, ReadRSSICommand.opcode:
            returnParameters = [0x00] + command.parameters.prefix(2) + [0x00]
        // Every other command succeeds, with zeros for whatever it returns (no optional
        // command supported, no features).
        default: returnParameters = [0x00] + [UInt8](repeating: 0, count: 64)
        }
        return [.commandComplete(.init(numberOfHCICommandPackets: 1, opcode: opcode, returnParameters: returnParameters))]
    }
}

/// Whether the host must answer this signalling payload, and with which identifier: a
/// request, or anything it cannot make sense of (Core 6.0, Vol 3, Part A, 4 and 4.1).
func expectedSignalingReply(_ payload: [UInt8]) -> UInt8? {
    // Identifier 0 is never valid (Vol 3, Part A, 4): such a packet is ignored.
    guard payload.count >= 2, payload[1] != 0 else { return nil }
    guard let packet = try? LESignalingPacket.decode(payload) else { return payload[1] }
    guard let command = try? packet.command else { return packet.identifier }
    switch command {
    case .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse, .leCreditBasedConnectionResponse,
         .flowControlCreditIndication, .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
        return nil
    case .disconnectionRequest, .connectionParameterUpdateRequest, .leCreditBasedConnectionRequest, .creditBasedConnectionRequest,
         .creditBasedReconfigureRequest, .unknown:
        return packet.identifier
    }
}

/// Whether the host must refuse to pair: a Pairing Request or a Security Request, well-formed
/// or not (Core 6.0, Vol 3, Part H, 3.5.5).
let channels: [L2CAPChannelID] = [.leSignaling, .securityManager, .att, L2CAPChannelID(rawValue: 0x0040)]

func run(_ input: FuzzInput) async {
    var input = input
    let controller = ScriptedController()
    var configuration = HostConfiguration()
    configuration.exchangesMTUOnConnect = false
    configuration.requestsDataLengthExtension = false
    configuration.receiveCoalescingWindow = .zero
    configuration.clock = .manual(ManualClock())
    let host = LEHost(transport: controller, configuration: configuration, logger: fuzzLogger)
    do {
        try await host.powerOn()
    } catch {
        fuzzFailure("the host does not power on: \(error)")
    }
    let role: ConnectionRole = input.bool() ? .peripheral : .central
    let handle = ScriptedController.handle
    let connected = HCIEvent.le(.connectionComplete(.init(
        connectionHandle: handle, role: role, peerAddressType: .public, peerAddress: BluetoothAddress(rawValue: 0xC0FFEE001122),
        connectionInterval: 0x0018, peripheralLatency: 0, supervisionTimeout: 0x0048)))
    controller.deliver([H4Packet(.event, connected.encode())])
    while await host.connections.isEmpty { await Task.yield() }

    var expectedSignaling: [UInt8] = []
    func send(_ payload: [UInt8], on channel: L2CAPChannelID, cutAt cut: Int?) {
        let frame = L2CAPBasicFrame.encode(channelID: channel, payload: payload)
        let fragments = cut.map { [Array(frame.prefix($0)), Array(frame.dropFirst($0))] } ?? [frame]
        controller.deliver(fragments.enumerated().map { index, fragment in
            H4Packet(.acl, ACLDataPacket(connectionHandle: handle, packetBoundary: index == 0 ? .firstFlushable : .continuing, data: fragment).encode())
        })
        if channel == .leSignaling, let identifier = expectedSignalingReply(payload) { expectedSignaling.append(identifier) }
    }
    while !input.isAtEnd {
        let control = input.byte()
        let payload = input.chunk()
        send(payload, on: channels[Int(control & 0b11)], cutAt: control & 0x80 != 0 ? Int(control & 0x7F) % (payload.count + 4) + 1 : nil)
    }
    // A probe: an unknown signalling code, whose answer comes after every other signalling
    // answer (the host handles its channels in order).
    let probe: UInt8 = 0xEE
    send([0x3F, probe, 0x00, 0x00], on: .leSignaling, cutAt: nil)

    var signaling: [UInt8] = []
    for await (channel, payload) in controller.frames {
        switch channel {
        case .leSignaling:
            guard let packet = try? LESignalingPacket.decode(payload), let command = try? packet.command else {
                fuzzFailure("the host sent a malformed signalling packet \(fuzzHex(payload))")
            }
            switch command {
            case .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse, .leCreditBasedConnectionResponse,
                 .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
                signaling.append(packet.identifier)
            default:
                fuzzFailure("the host sent \(command) unasked")
            }
        case .securityManager:
            guard let pdu = try? SMPPDU.decode(payload) else { fuzzFailure("the host sent a malformed SMP PDU \(fuzzHex(payload))") }
            switch (role, pdu) {
            case (.central, .pairingResponse), (.central, .securityRequest), (.peripheral, .pairingRequest):
                fuzzFailure("the host sent \(pdu) as \(role)")
            default:
                break
            }
        default:
            break
        }
        if signaling.count >= expectedSignaling.count { break }
    }
    fuzzCheck(signaling == expectedSignaling, "signalling answers \(signaling.map { Hex.format($0) }) for requests \(expectedSignaling.map { Hex.format($0) })")
    let links = await host.connections.map(\.handle)
    fuzzCheck(links == [handle], "the link went down")
    fuzzCheck(controller.disconnects.withLock { $0 } == 0, "the host disconnected the peer")
    await host.shutdown()
}

runFuzzer { input in
    let frames = input
    fuzzAwait { await run(frames) }
}
