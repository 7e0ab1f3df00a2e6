import BluetoothCore
import Testing
@testable import BluetoothHCI

@Suite(.timeLimit(.minutes(1))) struct CommandFlowControlTests {
    typealias Flow = CommandFlowControl<String>

    static let reset = HCIOpcode(rawValue: 0x0C03)
    static let readVersion = HCIOpcode(rawValue: 0x1001)
    static let scanEnable = HCIOpcode(rawValue: 0x200C)

    static let readRSSI = HCIOpcode(rawValue: 0x1405)

    let clock = ManualClock()
    var now: BluetoothClock.Instant { BluetoothClock.manual(clock).now }

    func command(_ id: UInt64, _ opcode: HCIOpcode = readVersion, handle: UInt16? = nil) -> Flow.Command {
        Flow.Command(id: id, opcode: opcode, packet: [UInt8(id)], ticket: "c\(id)", connectionHandle: handle)
    }

    @Test func oneCommandGoesBeforeAnyCredit() {
        // The host may send one command before the controller says anything (Vol 4, Part E, 4.4).
        var flow = Flow()
        #expect(flow.submit(command(1)).map(\.id) == [1])
        #expect(flow.submit(command(2)).isEmpty)
        #expect(flow.submit(command(3)).isEmpty)
        #expect(flow.inFlightCount == 1)
        #expect(flow.waitingCount == 2)
    }

    @Test func creditsReleaseWaitingCommandsInOrder() {
        var flow = Flow()
        _ = flow.submit(command(1, Self.reset))
        _ = flow.submit(command(2))
        _ = flow.submit(command(3))
        _ = flow.submit(command(4))
        let acknowledgement = flow.acknowledge(opcode: Self.reset, credits: 2, at: now)
        #expect(acknowledgement.answered?.id == 1)
        #expect(acknowledgement.answered?.ticket == "c1")
        #expect(acknowledgement.send.map(\.id) == [2, 3])
        #expect(flow.credits == 0)
        #expect(flow.waitingCount == 1)
    }

    @Test func eachAcknowledgementSetsTheCreditsAnew() {
        // Num_HCI_Command_Packets is the number allowed now, not an increment.
        var flow = Flow()
        _ = flow.submit(command(1))
        _ = flow.acknowledge(opcode: Self.readVersion, credits: 5, at: now)
        #expect(flow.credits == 5)
        _ = flow.acknowledge(opcode: .noOperation, credits: 1, at: now)
        #expect(flow.credits == 1)
        for id in UInt64(2)...4 { _ = flow.submit(command(id)) }
        #expect(flow.inFlightCount == 1)
        #expect(flow.waitingCount == 2)
    }

    @Test func zeroCreditsHoldEverythingUntilTheControllerAllowsMore() {
        var flow = Flow()
        _ = flow.submit(command(1))
        let first = flow.acknowledge(opcode: Self.readVersion, credits: 0, at: now)
        #expect(first.answered?.id == 1)
        #expect(first.send.isEmpty)
        #expect(flow.submit(command(2)).isEmpty)
        // A Command Complete with the no-op opcode only returns credits; it answers nothing.
        let nop = flow.acknowledge(opcode: .noOperation, credits: 1, at: now)
        #expect(nop.answered == nil)
        #expect(nop.send.map(\.id) == [2])
    }

    @Test func anAnswerMatchesTheOldestCommandInFlightWithItsOpcode() {
        var flow = Flow()
        _ = flow.submit(command(1))
        _ = flow.acknowledge(opcode: .noOperation, credits: 3, at: now)
        _ = flow.submit(command(2, Self.scanEnable))
        _ = flow.submit(command(3))
        #expect(flow.inFlightCount == 3)
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 1)
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 3)
        #expect(flow.acknowledge(opcode: Self.scanEnable, credits: 1, at: now).answered?.id == 2)
        #expect(flow.inFlightCount == 0)
    }

    @Test func anAnswerForNoCommandInFlightAnswersNothingButSetsCredits() {
        var flow = Flow()
        _ = flow.submit(command(1))
        let stray = flow.acknowledge(opcode: Self.reset, credits: 1, at: now)
        #expect(stray.answered == nil)
        #expect(flow.inFlightCount == 1)
        #expect(flow.credits == 1)
    }

    @Test func abandoningAWaitingCommandDropsItWithoutSendingAnything() {
        var flow = Flow()
        _ = flow.submit(command(1))
        _ = flow.submit(command(2))
        _ = flow.submit(command(3))
        let (abandoned, send) = flow.abandon(id: 2, at: now)
        #expect(abandoned?.ticket == "c2")
        #expect(send.isEmpty)
        #expect(flow.waitingCount == 1)
        // The next credit goes to the command after it.
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).send.map(\.id) == [3])
    }

    @Test func abandoningACommandInFlightGivesBackItsCredit() {
        // The controller will never answer it: without the credit the host would stall.
        var flow = Flow()
        _ = flow.submit(command(1))
        _ = flow.submit(command(2))
        #expect(flow.credits == 0)
        let (abandoned, send) = flow.abandon(id: 1, at: now)
        #expect(abandoned?.id == 1)
        #expect(send.map(\.id) == [2])
        #expect(flow.inFlightCount == 1)
        #expect(flow.waitingCount == 0)
    }

    @Test func abandoningAnUnknownOrAnsweredCommandDoesNothing() {
        var flow = Flow()
        _ = flow.submit(command(1))
        _ = flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now)
        let (abandoned, send) = flow.abandon(id: 1, at: now)
        #expect(abandoned == nil)
        #expect(send.isEmpty)
        #expect(flow.credits == 1)
        #expect(flow.abandon(id: 99, at: now).abandoned == nil)
    }

    /// Once a late answer resolved the next command of the same opcode: Read RSSI for link B
    /// returned link A's RSSI.
    @Test func aLateAnswerToAGivenUpCommandIsAbsorbed() {
        var flow = Flow()
        _ = flow.submit(command(1))
        _ = flow.abandon(id: 1, at: now)  // timed out in flight
        #expect(flow.ghostCount == 1)
        _ = flow.submit(command(2))
        let late = flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now)
        #expect(late.wasLate && late.answered == nil, "the late answer is the given-up command's")
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 2)
        #expect(flow.ghostCount == 0)
    }

    @Test func anAnswerNamingAConnectionGoesToThatConnectionsCommand() {
        var flow = Flow()
        _ = flow.acknowledge(opcode: .noOperation, credits: 3, at: now)
        _ = flow.submit(command(1, Self.readRSSI, handle: 0x0040))
        _ = flow.abandon(id: 1, at: now)
        _ = flow.submit(command(2, Self.readRSSI, handle: 0x0041))
        // Link B's answer arrives first: it goes to link B's command, not to A's ghost.
        #expect(flow.acknowledge(opcode: Self.readRSSI, connectionHandle: 0x0041, credits: 1, at: now).answered?.id == 2)
        // Link A's late answer is absorbed by its ghost.
        #expect(flow.acknowledge(opcode: Self.readRSSI, connectionHandle: 0x0040, credits: 1, at: now).wasLate)
    }

    @Test func aGhostThatNeverHearsItsAnswerExpires() {
        var flow = Flow(ghostLifetime: .seconds(5))
        _ = flow.submit(command(1))
        _ = flow.abandon(id: 1, at: now)
        clock.advance(by: .seconds(5))
        _ = flow.submit(command(2))
        // The controller dropped the first command; the answer is the second's.
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 2)
        #expect(flow.ghostCount == 0)
    }

    @Test func ghostsAreBounded() {
        var flow = Flow()
        for id in UInt64(1)...UInt64(Flow.maximumGhosts + 10) {
            _ = flow.submit(command(id))
            _ = flow.abandon(id: id, at: now)
        }
        #expect(flow.ghostCount == Flow.maximumGhosts)
    }

    @Test func removeAllReturnsEveryCommandInFlightAndWaiting() {
        var flow = Flow()
        for id in UInt64(1)...3 { _ = flow.submit(command(id)) }
        let all = flow.removeAll()
        #expect(Set(all.map(\.id)) == [1, 2, 3])
        #expect(flow.inFlightCount == 0)
        #expect(flow.waitingCount == 0)
    }
}
