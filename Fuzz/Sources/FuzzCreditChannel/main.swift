import BluetoothCore
import BluetoothHost
import FuzzSupport

/// The receive and send paths of one credit-based channel (``CreditBasedFlowControl``, Core
/// 6.0, Vol 3, Part A, 3.4 and 10.1) as a peer drives them: K-frames of any length and
/// content, the peer's side of the channel from decoded LE signalling commands (LE and
/// enhanced credit-based connection requests and responses, reconfigure requests, credit
/// indications), our reader taking SDUs at any moment and our writers queueing SDUs.
///
/// Checked after every step: the flow control never traps; the K-frames it has accepted never
/// exceed the credits it granted (the initial ones and those given back), so its buffer stays
/// bounded; the credits the peer holds never exceed the target; every SDU the reader takes is
/// at most the MTU and is exactly what a reference reassembly of the accepted K-frames gives;
/// a refused K-frame is a typed ``L2CAPChannelViolation`` (the channel then ends, as the
/// host disconnects it); a reader that has taken everything leaves the peer credits to send
/// (no deadlock). On the send side: frames go out only against the peer's credits, none longer
/// than its MPS, and reassemble to the SDUs queued, in order, each write marked on its last frame.
///
/// Input: two bytes for our MTU, one for our MPS, one for the initial credits; then steps, a
/// selector byte each, with the step's own bytes (see `step`).

/// What the peer sent and how many credits it had, to check the flow control against.
struct ReceiveModel {
    let mtu: Int
    var granted: Int
    var accepted = 0
    /// SDUs complete by the reference reassembly, not yet taken by the reader.
    var complete: [[UInt8]] = []
    var partial: (length: Int, bytes: [UInt8])?

    /// The reference reassembly of an accepted K-frame (Vol 3, Part A, 3.4.2).
    mutating func accept(_ payload: [UInt8]) {
        accepted += 1
        if var current = partial {
            current.bytes += payload
            partial = current
        } else {
            guard payload.count >= 2 else { fuzzFailure("accepted a first K-frame of \(payload.count) bytes") }
            partial = (Int(payload[0]) | Int(payload[1]) << 8, Array(payload.dropFirst(2)))
        }
        if let current = partial {
            fuzzCheck(current.bytes.count <= current.length, "accepted \(current.bytes.count) bytes for an SDU of \(current.length)")
            fuzzCheck(current.length <= mtu, "accepted an SDU of \(current.length) bytes over the MTU \(mtu)")
            if current.bytes.count == current.length {
                complete.append(current.bytes)
                partial = nil
            }
        }
    }
}

/// What our writers queued, to check the frames sent against.
struct SendModel {
    var queued: [(sdu: [UInt8], write: UInt64)] = []
    var partial: (length: Int, bytes: [UInt8])?
    var nextWrite: UInt64 = 1
}

struct Channel {
    var flow: CreditBasedFlowControl
    var receive: ReceiveModel
    var send = SendModel()
    /// Set once the flow control refused a K-frame: the host disconnects the channel.
    var ended = false

    init(mtu: Int, mps: Int, credits: Int) {
        flow = CreditBasedFlowControl(mtu: mtu, mps: mps, initialCredits: credits)
        receive = ReceiveModel(mtu: mtu, granted: credits)
    }

    mutating func frame(_ payload: [UInt8]) {
        let creditsBefore = flow.peerCredits
        do {
            let completed = try flow.receive(payload[...])
            fuzzCheck(creditsBefore > 0, "accepted a K-frame with the peer holding no credits")
            fuzzCheck(payload.count <= flow.mps, "accepted a K-frame of \(payload.count) bytes over the MPS \(flow.mps)")
            let completeBefore = receive.complete.count
            receive.accept(payload)
            fuzzCheck(completed == (receive.complete.count > completeBefore),
                      "receive said \(completed) for a K-frame the reference \(completed ? "did not complete" : "completed") an SDU with")
        } catch {
            // Errors are typed; only a violation of the peer's may end the channel.
            guard case .protocolViolation = error else { fuzzFailure("receive threw \(error), not a protocol violation") }
            fuzzTrace("refused K-frame \(fuzzHex(payload)): \(error)")
            ended = true
        }
    }

    mutating func takeSDU() {
        let sdu = flow.takeSDU()
        let expected = receive.complete.first
        fuzzCheck(sdu == expected, "the reader took \(sdu.map { fuzzHex($0) } ?? "nothing"), the reference has \(expected.map { fuzzHex($0) } ?? "nothing")")
        if let sdu {
            fuzzCheck(sdu.count <= flow.mtu, "an SDU of \(sdu.count) bytes over the MTU \(flow.mtu)")
            receive.complete.removeFirst()
        }
    }

    mutating func giveCredits() {
        let before = flow.peerCredits
        guard let credits = flow.creditsToGive() else { return }
        fuzzCheck(credits > 0, "a credit indication of 0 credits")
        fuzzCheck(flow.peerCredits == before + Int(credits), "gave \(credits) credits, peer went from \(before) to \(flow.peerCredits)")
        receive.granted += Int(credits)
    }

    /// The peer's side of the channel from one signalling command, checked as the host checks
    /// it (LEHost+Channels.swift): only values the host accepts reach the flow control.
    mutating func signaling(_ bytes: [UInt8]) {
        guard let packet = try? LESignalingPacket.decode(bytes), let command = try? packet.command else { return }
        fuzzTrace("signalling \(command)")
        switch command {
        case let .leCreditBasedConnectionRequest(request):
            guard request.mtu >= 23, request.mps >= 23, request.mps <= L2CAPChannelParameters.maximumMPS else { return }
            flow.connect(peerMTU: Int(request.mtu), peerMPS: Int(request.mps), credits: Int(request.initialCredits))
        case let .leCreditBasedConnectionResponse(response):
            guard response.result.isSuccess, response.mtu >= 23, response.mps >= 23, response.mps <= L2CAPChannelParameters.maximumMPS else { return }
            flow.connect(peerMTU: Int(response.mtu), peerMPS: Int(response.mps), credits: Int(response.initialCredits))
        case let .creditBasedConnectionRequest(request):
            guard request.mtu >= 64, request.mps >= 64, request.mps <= L2CAPChannelParameters.maximumMPS else { return }
            flow.connect(peerMTU: Int(request.mtu), peerMPS: Int(request.mps), credits: Int(request.initialCredits))
        case let .creditBasedConnectionResponse(response):
            guard response.mtu >= 64, response.mps >= 64, response.mps <= L2CAPChannelParameters.maximumMPS else { return }
            flow.connect(peerMTU: Int(response.mtu), peerMPS: Int(response.mps), credits: Int(response.initialCredits))
        case let .creditBasedReconfigureRequest(request):
            guard request.mtu >= 64, request.mps >= 64, request.mps <= L2CAPChannelParameters.maximumMPS,
                  Int(request.mtu) >= flow.peerMTU else { return }
            flow.reconfigure(peerMTU: Int(request.mtu), peerMPS: Int(request.mps))
        case let .flowControlCreditIndication(indication):
            addCredits(indication.credits)
        default:
            break
        }
        fuzzCheck(flow.sendCredits <= CreditBasedFlowControl.maximumCredits, "\(flow.sendCredits) send credits, over 65535")
    }

    mutating func addCredits(_ credits: UInt16) {
        let before = flow.sendCredits
        do {
            try flow.addSendCredits(credits)
            fuzzCheck(flow.sendCredits == before + Int(credits), "added \(credits) credits to \(before), have \(flow.sendCredits)")
        } catch {
            fuzzCheck(error == .protocolViolation(.creditOverflow), "adding credits threw \(error)")
            fuzzCheck(before + Int(credits) > CreditBasedFlowControl.maximumCredits, "refused \(credits) credits on top of \(before)")
            fuzzCheck(flow.sendCredits == before, "refused credits changed the count")
        }
    }

    mutating func write(length: Int, seed: UInt8) {
        let sdu = (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }
        let write = send.nextWrite
        do {
            try flow.enqueue(sdu, write: write)
            fuzzCheck(sdu.count <= flow.peerMTU, "queued an SDU of \(sdu.count) bytes over the peer's MTU \(flow.peerMTU)")
            send.queued.append((sdu, write))
            send.nextWrite += 1
        } catch {
            fuzzCheck(error == .sduTooLong(length: sdu.count, mtu: flow.peerMTU), "enqueue threw \(error)")
        }
    }

    mutating func sendFrames() {
        let credits = flow.sendCredits
        let frames = flow.takeSendableFrames()
        fuzzCheck(frames.count <= credits, "sent \(frames.count) K-frames on \(credits) credits")
        fuzzCheck(flow.sendCredits == credits - frames.count, "sending \(frames.count) frames left \(flow.sendCredits) of \(credits) credits")
        for frame in frames {
            fuzzCheck(frame.payload.count <= max(3, flow.peerMPS), "a K-frame of \(frame.payload.count) bytes over the peer's MPS \(flow.peerMPS)")
            var current: (length: Int, bytes: [UInt8])
            if let partial = send.partial {
                current = (partial.length, partial.bytes + frame.payload)
            } else {
                fuzzCheck(frame.payload.count >= 2, "a first K-frame without the SDU Length")
                current = (Int(frame.payload[0]) | Int(frame.payload[1]) << 8, Array(frame.payload.dropFirst(2)))
            }
            guard let expected = send.queued.first else { fuzzFailure("a K-frame sent with no SDU queued") }
            fuzzCheck(current.length == expected.sdu.count, "an SDU Length of \(current.length) for an SDU of \(expected.sdu.count)")
            if current.bytes.count == current.length {
                fuzzCheck(current.bytes == expected.sdu, "the K-frames sent reassemble to something else than the SDU queued")
                fuzzCheck(frame.write == expected.write, "the last K-frame of write \(expected.write) is marked \(String(describing: frame.write))")
                send.queued.removeFirst()
                send.partial = nil
            } else {
                fuzzCheck(current.bytes.count < current.length, "the K-frames sent overrun their SDU")
                fuzzCheck(frame.write == nil, "a K-frame in the middle of an SDU is marked as its write's last")
                send.partial = current
            }
        }
    }

    /// The properties that hold between any two steps.
    func checkInvariants() {
        fuzzCheck(flow.peerCredits >= 0 && flow.peerCredits <= flow.creditTarget,
                  "the peer holds \(flow.peerCredits) credits, target \(flow.creditTarget)")
        fuzzCheck(receive.accepted <= receive.granted, "accepted \(receive.accepted) K-frames on \(receive.granted) credits granted")
        fuzzCheck(flow.peerCredits == receive.granted - receive.accepted,
                  "the peer holds \(flow.peerCredits) credits, granted \(receive.granted), spent \(receive.accepted)")
        fuzzCheck(flow.receivedCount == receive.complete.count, "\(flow.receivedCount) SDUs waiting, the reference has \(receive.complete.count)")
        fuzzCheck(flow.bufferedBytes <= (flow.receivedCount + 1) * flow.mtu, "\(flow.bufferedBytes) bytes buffered for \(flow.receivedCount) SDUs")
        fuzzCheck(flow.queuedFrameCount >= 0 && flow.sendCredits >= 0, "negative counts")
    }

    /// The reader takes everything and the credits due go back: the peer must then be able to
    /// send again (Vol 3, Part A, 10.1).
    mutating func drain() {
        while flow.receivedCount > 0 { takeSDU() }
        while true {
            let before = receive.granted
            giveCredits()
            if receive.granted == before { break }
        }
        fuzzCheck(flow.peerCredits > 0, "a drained reader leaves the peer without credits: the channel would stall")
    }
}

runFuzzer { input in
    let mtu = 23 + Int(input.uint16()) % 2048
    let mps = 23 + Int(input.byte()) % min(mtu - 22, 250)
    let credits = 1 + Int(input.byte()) % 40
    var channel = Channel(mtu: mtu, mps: mps, credits: credits)
    fuzzTrace("MTU \(mtu) MPS \(mps) credits \(credits)")
    while !input.isAtEnd, !channel.ended {
        switch input.byte() % 9 {
        case 0: channel.frame(input.chunk())
        case 1:
            // A well-formed SDU of the peer's, cut to our MPS (or to a shorter size).
            let length = input.index(mtu + 1)
            let cut = max(3, min(mps, 3 + Int(input.byte())))
            let sdu = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            for payload in CreditBasedFlowControl.segment(sdu, mps: cut) where !channel.ended { channel.frame(payload) }
        case 2: channel.takeSDU()
        case 3: channel.giveCredits()
        case 4: channel.signaling(input.chunk())
        case 5: channel.addCredits(input.uint16())
        case 6: channel.write(length: input.index(2100), seed: input.byte())
        case 7: channel.sendFrames()
        default:
            channel.checkInvariants()
            channel.drain()
        }
        // After a violation the host disconnects the channel: its state no longer matters.
        if !channel.ended { channel.checkInvariants() }
    }
    if !channel.ended { channel.drain() }
}
