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

    @Test func oneCommandGoesBeforeAnyCredit() throws {
        // The host may send one command before the controller says anything (Vol 4, Part E, 4.4).
        var flow = Flow()
        #expect(try flow.submit(command(1)).map(\.id) == [1])
        #expect(try flow.submit(command(2)).isEmpty)
        #expect(try flow.submit(command(3)).isEmpty)
        #expect(flow.inFlightCount == 1)
        #expect(flow.waitingCount == 2)
    }

    @Test func creditsReleaseWaitingCommandsInOrder() throws {
        var flow = Flow()
        _ = try flow.submit(command(1, Self.reset))
        _ = try flow.submit(command(2))
        _ = try flow.submit(command(3))
        _ = try flow.submit(command(4))
        let acknowledgement = flow.acknowledge(opcode: Self.reset, credits: 2, at: now)
        #expect(acknowledgement.answered?.id == 1)
        #expect(acknowledgement.answered?.ticket == "c1")
        #expect(acknowledgement.send.map(\.id) == [2, 3])
        #expect(flow.credits == 0)
        #expect(flow.waitingCount == 1)
    }

    @Test func eachAcknowledgementSetsTheCreditsAnew() throws {
        // Num_HCI_Command_Packets is the number allowed now, not an increment.
        var flow = Flow()
        _ = try flow.submit(command(1))
        _ = flow.acknowledge(opcode: Self.readVersion, credits: 5, at: now)
        #expect(flow.credits == 5)
        _ = flow.acknowledge(opcode: .noOperation, credits: 1, at: now)
        #expect(flow.credits == 1)
        for id in UInt64(2)...4 { _ = try flow.submit(command(id)) }
        #expect(flow.inFlightCount == 1)
        #expect(flow.waitingCount == 2)
    }

    @Test func zeroCreditsHoldEverythingUntilTheControllerAllowsMore() throws {
        var flow = Flow()
        _ = try flow.submit(command(1))
        let first = flow.acknowledge(opcode: Self.readVersion, credits: 0, at: now)
        #expect(first.answered?.id == 1)
        #expect(first.send.isEmpty)
        #expect(try flow.submit(command(2)).isEmpty)
        // A Command Complete with the no-op opcode only returns credits; it answers nothing.
        let nop = flow.acknowledge(opcode: .noOperation, credits: 1, at: now)
        #expect(nop.answered == nil)
        #expect(nop.send.map(\.id) == [2])
    }

    @Test func anAnswerMatchesTheOldestCommandInFlightWithItsOpcode() throws {
        var flow = Flow()
        _ = try flow.submit(command(1))
        _ = flow.acknowledge(opcode: .noOperation, credits: 3, at: now)
        _ = try flow.submit(command(2, Self.scanEnable))
        _ = try flow.submit(command(3))
        #expect(flow.inFlightCount == 3)
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 1)
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 3)
        #expect(flow.acknowledge(opcode: Self.scanEnable, credits: 1, at: now).answered?.id == 2)
        #expect(flow.inFlightCount == 0)
    }

    @Test func anAnswerForNoCommandInFlightAnswersNothingButSetsCredits() throws {
        var flow = Flow()
        _ = try flow.submit(command(1))
        let stray = flow.acknowledge(opcode: Self.reset, credits: 1, at: now)
        #expect(stray.answered == nil)
        #expect(flow.inFlightCount == 1)
        #expect(flow.credits == 1)
    }

    @Test func abandoningAWaitingCommandDropsItWithoutSendingAnything() throws {
        var flow = Flow()
        _ = try flow.submit(command(1))
        _ = try flow.submit(command(2))
        _ = try flow.submit(command(3))
        let (abandoned, send) = flow.abandon(id: 2, at: now)
        #expect(abandoned?.ticket == "c2")
        #expect(send.isEmpty)
        #expect(flow.waitingCount == 1)
        // The next credit goes to the command after it.
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).send.map(\.id) == [3])
    }

    @Test func abandoningACommandInFlightGivesBackItsCredit() throws {
        // The controller will never answer it: without the credit the host would stall.
        var flow = Flow()
        _ = try flow.submit(command(1))
        _ = try flow.submit(command(2))
        #expect(flow.credits == 0)
        let (abandoned, send) = flow.abandon(id: 1, at: now)
        #expect(abandoned?.id == 1)
        #expect(send.map(\.id) == [2])
        #expect(flow.inFlightCount == 1)
        #expect(flow.waitingCount == 0)
    }

    @Test func abandoningAnUnknownOrAnsweredCommandDoesNothing() throws {
        var flow = Flow()
        _ = try flow.submit(command(1))
        _ = flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now)
        let (abandoned, send) = flow.abandon(id: 1, at: now)
        #expect(abandoned == nil)
        #expect(send.isEmpty)
        #expect(flow.credits == 1)
        #expect(flow.abandon(id: 99, at: now).abandoned == nil)
    }

    /// Once a late answer resolved the next command of the same opcode: Read RSSI for link B
    /// returned link A's RSSI.
    @Test func aLateAnswerToAGivenUpCommandIsAbsorbed() throws {
        var flow = Flow()
        _ = try flow.submit(command(1))
        _ = flow.abandon(id: 1, at: now)  // timed out in flight
        #expect(flow.ghostCount == 1)
        _ = try flow.submit(command(2))
        let late = flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now)
        #expect(late.wasLate && late.answered == nil, "the late answer is the given-up command's")
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 2)
        #expect(flow.ghostCount == 0)
    }

    @Test func anAnswerNamingAConnectionGoesToThatConnectionsCommand() throws {
        var flow = Flow()
        _ = flow.acknowledge(opcode: .noOperation, credits: 3, at: now)
        _ = try flow.submit(command(1, Self.readRSSI, handle: 0x0040))
        _ = flow.abandon(id: 1, at: now)
        _ = try flow.submit(command(2, Self.readRSSI, handle: 0x0041))
        // Link B's answer arrives first: it goes to link B's command, not to A's ghost.
        #expect(flow.acknowledge(opcode: Self.readRSSI, connectionHandle: 0x0041, credits: 1, at: now).answered?.id == 2)
        // Link A's late answer is absorbed by its ghost.
        #expect(flow.acknowledge(opcode: Self.readRSSI, connectionHandle: 0x0040, credits: 1, at: now).wasLate)
    }

    @Test func aGhostThatNeverHearsItsAnswerExpires() throws {
        var flow = Flow(ghostLifetime: .seconds(5))
        _ = try flow.submit(command(1))
        _ = flow.abandon(id: 1, at: now)
        clock.advance(by: .seconds(5))
        _ = try flow.submit(command(2))
        // The controller dropped the first command; the answer is the second's.
        #expect(flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now).answered?.id == 2)
        #expect(flow.ghostCount == 0)
    }

    @Test func ghostsAreBounded() throws {
        var flow = Flow()
        for id in UInt64(1)...UInt64(Flow.maximumGhosts + 10) {
            _ = try flow.submit(command(id))
            _ = flow.abandon(id: id, at: now)
        }
        #expect(flow.ghostCount == Flow.maximumGhosts)
    }

    @Test func removeAllReturnsEveryCommandInFlightAndWaiting() throws {
        var flow = Flow()
        for id in UInt64(1)...3 { _ = try flow.submit(command(id)) }
        let all = flow.removeAll()
        #expect(Set(all.map(\.id)) == [1, 2, 3])
        #expect(flow.inFlightCount == 0)
        #expect(flow.waitingCount == 0)
    }

    @Test func commandsPastTheWaitingLimitAreRefused() throws {
        var flow = Flow(waitingLimit: 2)
        _ = try flow.submit(command(1))  // in flight
        _ = try flow.submit(command(2))
        _ = try flow.submit(command(3))
        #expect(throws: Flow.QueueFull()) { try flow.submit(command(4)) }
        #expect(flow.waitingCount == 2)
        _ = flow.acknowledge(opcode: Self.readVersion, credits: 1, at: now)
        #expect(try flow.submit(command(5)).isEmpty)
    }

    /// A model controller against the flow control, seeded so that a failure replays. The
    /// controller answers each opcode (and, for Read RSSI, each link) in the order it got the
    /// commands, with random credits, while the host gives up commands at random and time
    /// passes. An answer must resolve exactly the command it was sent for: a late answer to a
    /// given-up command is absorbed (while its ghost lives), never taken for a later one.
    @Test(arguments: [UInt64(1), 2, 3, 42, 1234])
    func answersOnlyEverResolveTheCommandTheyWereSentFor(seed: UInt64) throws {
        var generator = SeededRandomNumberGenerator(seed: seed)
        let lifetime = Duration.seconds(5)
        var flow = Flow(ghostLifetime: lifetime, waitingLimit: 8)
        struct Sent { var id: UInt64; var opcode: HCIOpcode; var handle: UInt16? }
        // What the controller was sent and will answer, in the order it got it.
        var unanswered: [Sent] = []
        var waiting: [UInt64] = []
        var inFlight: Set<UInt64> = []
        // Commands given up in flight, in order, with when: their late answers are absorbed
        // while their ghost lives (younger than the lifetime, among the newest ghosts).
        var ghosts: [(id: UInt64, at: BluetoothClock.Instant)] = []
        var nextID: UInt64 = 0
        var lastWritten: UInt64 = 0
        var resolved = 0
        var absorbed = 0

        func written(_ commands: [Flow.Command]) throws {
            for command in commands {
                try #require(command.id > lastWritten, "commands are written in the order they were submitted")
                lastWritten = command.id
                waiting.removeAll { $0 == command.id }
                inFlight.insert(command.id)
                unanswered.append(Sent(id: command.id, opcode: command.opcode, handle: command.connectionHandle))
            }
        }
        func isAnswerable(_ sent: Sent) -> Bool {
            guard let index = ghosts.firstIndex(where: { $0.id == sent.id }) else { return true }
            return ghosts[index].at + lifetime > now && ghosts.count - index <= Flow.maximumGhosts
        }

        for _ in 0..<4000 {
            // The controller never answers what the host can no longer recognise.
            unanswered.removeAll { !isAnswerable($0) }
            switch Int.random(in: 0..<20, using: &generator) {
            case 0..<7:
                nextID += 1
                let opcode = [Self.readVersion, Self.scanEnable, Self.readRSSI].randomElement(using: &generator) ?? Self.readVersion
                let handle: UInt16? = opcode == Self.readRSSI ? UInt16.random(in: 1...2, using: &generator) : nil
                do {
                    let ready = try flow.submit(Flow.Command(id: nextID, opcode: opcode, packet: [], ticket: "", connectionHandle: handle))
                    waiting.append(nextID)
                    try written(ready)
                } catch {
                    try #require(waiting.count == 8)
                }
            case 7..<14:
                // The oldest command of a random opcode and link is answered.
                guard let pick = unanswered.randomElement(using: &generator),
                      let oldest = unanswered.first(where: { $0.opcode == pick.opcode && $0.handle == pick.handle }) else { continue }
                unanswered.removeAll { $0.id == oldest.id }
                let acknowledgement = flow.acknowledge(opcode: oldest.opcode, connectionHandle: oldest.handle,
                                                       credits: UInt8.random(in: 0...2, using: &generator), at: now)
                if ghosts.contains(where: { $0.id == oldest.id }) {
                    try #require(acknowledgement.wasLate && acknowledgement.answered == nil, "a late answer is absorbed by its ghost")
                    absorbed += 1
                } else {
                    try #require(acknowledgement.answered?.id == oldest.id, "the answer resolves the command it was sent for")
                    inFlight.remove(oldest.id)
                    resolved += 1
                }
                try written(acknowledgement.send)
            case 14..<16:
                // The host gives up a command, waiting or in flight.
                guard let id = (waiting + Array(inFlight)).randomElement(using: &generator) else { continue }
                let (abandoned, send) = flow.abandon(id: id, at: now)
                try #require(abandoned?.id == id)
                if inFlight.remove(id) != nil { ghosts.append((id, now)) }
                waiting.removeAll { $0 == id }
                try written(send)
            case 16..<18:
                clock.advance(by: .milliseconds(Int.random(in: 0...2000, using: &generator)))
            default:
                try written(flow.acknowledge(opcode: .noOperation, credits: 1, at: now).send)
            }
            try #require(flow.inFlightCount == inFlight.count)
            try #require(flow.waitingCount == waiting.count)
            try #require(flow.ghostCount <= Flow.maximumGhosts)
        }
        // The run exercised what it is about.
        #expect(resolved > 200)
        #expect(absorbed > 5)
    }
}
