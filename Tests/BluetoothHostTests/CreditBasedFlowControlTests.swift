@testable import BluetoothHost
import Testing

/// The credit-based flow control state machine (Core 6.0, Vol 3, Part A, 3.4, 10.1) with no I/O.
@Suite("L2CAP credit-based flow control")
struct CreditBasedFlowControlTests {
    /// The K-frames of `sdu` for an MPS, as the peer would send them.
    private func frames(_ sdu: [UInt8], mps: Int) -> [ArraySlice<UInt8>] {
        CreditBasedFlowControl.segment(sdu, mps: mps).map { $0[...] }
    }

    @Test func segmentationPutsTheSDULengthInTheFirstFrameOnly() {
        let sdu = (0..<50).map { UInt8($0) }
        let frames = CreditBasedFlowControl.segment(sdu, mps: 23)
        #expect(frames.map(\.count) == [23, 23, 6])
        #expect(Array(frames[0].prefix(2)) == [50, 0])
        #expect(Array(frames.joined().dropFirst(2)) == sdu)
        // An empty SDU is one frame holding only its length.
        #expect(CreditBasedFlowControl.segment([], mps: 23) == [[0, 0]])
    }

    @Test func reassemblyReturnsCreditsOnlyAsTheReaderTakesSDUs() throws {
        var flow = CreditBasedFlowControl(mtu: 100, mps: 23, initialCredits: 4)
        let sdu = (0..<40).map { UInt8($0) }
        var completed: [Bool] = []
        for frame in frames(sdu, mps: 23) { completed.append(try flow.receive(frame)) }
        #expect(completed == [false, true])
        #expect(flow.peerCredits == 2)
        // Nothing is due until the reader takes the SDU.
        #expect(flow.creditsToGive() == nil)
        #expect(flow.takeSDU() == sdu)
        #expect(flow.creditsToGive() == 2)
        #expect(flow.peerCredits == 4)
        #expect(flow.takeSDU() == nil)
    }

    @Test func aSlowReaderStopsTheSenderWithinItsCredits() throws {
        var flow = CreditBasedFlowControl(mtu: 30, mps: 30, initialCredits: 3)
        for index in 0..<3 { _ = try flow.receive(frames([UInt8(index)], mps: 30)[0]) }
        #expect(flow.receivedCount == 3)
        #expect(flow.peerCredits == 0)
        // A fourth frame without credits breaks the rules: the channel must be disconnected.
        #expect(throws: L2CAPChannelError.protocolViolation(.frameWithoutCredits)) { try flow.receive([1, 0, 9]) }
        // Reading one gives its credit back at once, as the peer has none.
        #expect(flow.takeSDU() == [0])
        #expect(flow.creditsToGive() == 1)
    }

    @Test func creditsAreGivenBackInBatchesWhileThePeerHasSome() throws {
        var flow = CreditBasedFlowControl(mtu: 30, mps: 30, initialCredits: 8)
        for index in 0..<4 { _ = try flow.receive(frames([UInt8(index)], mps: 30)[0]) }
        #expect(flow.takeSDU() == [0])
        #expect(flow.creditsToGive() == nil)
        for _ in 0..<3 { _ = flow.takeSDU() }
        #expect(flow.creditsToGive() == 4)
    }

    @Test func hostileFramesAreTypedViolations() throws {
        var flow = CreditBasedFlowControl(mtu: 50, mps: 23, initialCredits: 10)
        #expect(throws: L2CAPChannelError.protocolViolation(.sduLongerThanMTU(length: 51, mtu: 50))) { try flow.receive([51, 0, 1]) }
        flow = CreditBasedFlowControl(mtu: 50, mps: 23, initialCredits: 10)
        #expect(throws: L2CAPChannelError.protocolViolation(.frameLongerThanMPS(length: 24, mps: 23))) {
            try flow.receive(ArraySlice([20, 0] + [UInt8](repeating: 0, count: 22)))
        }
        flow = CreditBasedFlowControl(mtu: 50, mps: 23, initialCredits: 10)
        #expect(throws: L2CAPChannelError.protocolViolation(.missingSDULength)) { try flow.receive([7]) }
        flow = CreditBasedFlowControl(mtu: 50, mps: 23, initialCredits: 10)
        #expect(try flow.receive([3, 0, 1]) == false)
        #expect(throws: L2CAPChannelError.protocolViolation(.sduOverrun(expected: 3, received: 4))) { try flow.receive([2, 3, 4]) }
    }

    @Test func sendingWaitsForCreditsAndCreditsCannotPass65535() throws {
        var flow = CreditBasedFlowControl(mtu: 100, mps: 100, initialCredits: 1)
        flow.connect(peerMTU: 40, peerMPS: 23, credits: 1)
        #expect(throws: L2CAPChannelError.sduTooLong(length: 41, mtu: 40)) { try flow.enqueue([UInt8](repeating: 0, count: 41), write: 1) }
        try flow.enqueue([UInt8](repeating: 7, count: 40), write: 2)
        let first = flow.takeSendableFrames()
        #expect(first.count == 1 && first[0].write == nil)
        #expect(flow.takeSendableFrames().isEmpty)
        try flow.addSendCredits(5)
        let rest = flow.takeSendableFrames()
        #expect(rest.map(\.write) == [2])
        #expect(flow.sendCredits == 4)
        #expect(throws: L2CAPChannelError.protocolViolation(.creditOverflow)) { try flow.addSendCredits(65532) }
        try flow.addSendCredits(65531)
        #expect(flow.sendCredits == 65535)
    }

    @Test func anSDUCutFinerThanTheCreditsDoesNotDeadlock() throws {
        // MTU 100 in 10-byte frames needs 11 frames; the peer holds 4 credits.
        var flow = CreditBasedFlowControl(mtu: 100, mps: 10, initialCredits: 4)
        let sdu = (0..<98).map { UInt8($0) }
        var given = 0
        for frame in frames(sdu, mps: 10) {
            #expect(flow.peerCredits > 0)
            _ = try flow.receive(frame)
            given += Int(flow.creditsToGive() ?? 0)
        }
        #expect(flow.takeSDU() == sdu)
        #expect(given > 0)
    }

    @Test func randomSegmentationsReassembleByteExact() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let mps = Int.random(in: 23...100, using: &generator)
            let sdu = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var flow = CreditBasedFlowControl(mtu: 300, mps: mps, initialCredits: 20)
            var done = false
            for frame in frames(sdu, mps: mps) {
                done = try flow.receive(frame)
                _ = flow.creditsToGive()
            }
            #expect(done)
            #expect(flow.takeSDU() == sdu)
        }
    }

    /// Found by FuzzCreditChannel: frames cut for the old MPS were sent over the new, smaller one.
    @Test func framesQueuedBeforeAnMPSReductionAreCutToTheNewMPS() throws {
        var flow = CreditBasedFlowControl(mtu: 100, mps: 100, initialCredits: 1)
        flow.connect(peerMTU: 300, peerMPS: 200, credits: 0)
        let sdu = (0..<250).map { UInt8(truncatingIfNeeded: $0) }
        try flow.enqueue(sdu, write: 7)
        #expect(flow.queuedFrameCount == 2)
        flow.reconfigure(peerMTU: 300, peerMPS: 64)
        try flow.addSendCredits(100)
        let sent = flow.takeSendableFrames()
        #expect(sent.allSatisfy { $0.payload.count <= 64 })
        #expect(sent.map(\.write) == Array(repeating: nil, count: sent.count - 1) + [7])
        #expect(Array(sent.flatMap(\.payload).dropFirst(2)) == sdu)
        #expect(sent.first?.payload.prefix(2) == [250, 0])
    }
}
