import BluetoothCore
import Testing
@testable import BluetoothHCI

@Suite(.timeLimit(.minutes(1))) struct ACLFlowControlTests {
    typealias Flow = ACLFlowControl<String>

    func fragments(_ handle: UInt16, _ tags: [UInt8], completion: String? = nil) -> [Flow.Fragment] {
        tags.enumerated().map { index, tag in
            Flow.Fragment(connectionHandle: handle, packet: [tag], completion: index == tags.count - 1 ? completion : nil)
        }
    }

    @Test func nothingIsSentBeforeTheBuffersAreKnown() throws {
        var flow = Flow()
        #expect(try flow.submit(fragments(1, [1, 2])).isEmpty)
        #expect(flow.queuedCount == 2)
        #expect(flow.configure(bufferCount: 4).map(\.packet) == [[1], [2]])
        #expect(flow.freeBuffers == 2)
    }

    @Test func sendsNoMoreThanTheControllerBuffers() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 3)
        let sent = try flow.submit(fragments(1, [1, 2, 3, 4, 5], completion: "pdu"))
        #expect(sent.map(\.packet) == [[1], [2], [3]])
        #expect(sent.allSatisfy { $0.completion == nil })
        #expect(flow.freeBuffers == 0)
        #expect(flow.queuedCount == 2)
        #expect(flow.inFlightCount(connectionHandle: 1) == 3)
    }

    @Test func completedPacketsReleaseQueuedFragmentsInOrder() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = try flow.submit(fragments(1, [1, 2, 3], completion: "first"))
        _ = try flow.submit(fragments(1, [4, 5], completion: "second"))
        let one = flow.complete(connectionHandle: 1, count: 1)
        #expect(one.map(\.packet) == [[3]])
        #expect(one.last?.completion == "first")
        let two = flow.complete(connectionHandle: 1, count: 2)
        #expect(two.map(\.packet) == [[4], [5]])
        #expect(two.last?.completion == "second")
        #expect(flow.queuedCount == 0)
    }

    @Test func completionsNeverCreditMoreThanWasSent() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = try flow.submit(fragments(1, [1, 2]))
        // A stale handle, then more packets than were outstanding.
        #expect(flow.complete(connectionHandle: 7, count: 5).isEmpty)
        #expect(flow.freeBuffers == 0)
        _ = flow.complete(connectionHandle: 1, count: 9)
        #expect(flow.freeBuffers == 2)
        #expect(flow.inFlightCount(connectionHandle: 1) == 0)
        _ = flow.complete(connectionHandle: 1, count: 9)
        #expect(flow.freeBuffers == 2)
        let sent = try flow.submit(fragments(1, [3, 4, 5]))
        #expect(sent.count == 2)
    }

    @Test func creditsAreCountedPerConnection() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 4)
        _ = try flow.submit(fragments(1, [1]))
        _ = try flow.submit(fragments(2, [2, 3]))
        // Handle 1 had one packet out: a report of two for it frees only one buffer.
        #expect(flow.complete(connectionHandle: 1, count: 2).isEmpty)
        #expect(flow.freeBuffers == 2)
        #expect(flow.inFlightCount(connectionHandle: 1) == 0)
        #expect(flow.inFlightCount(connectionHandle: 2) == 2)
    }

    @Test func aLongQueueDoesNotHoldUpAnotherConnectionsPDU() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        #expect(try flow.submit(fragments(1, Array(1...10), completion: "bulk")).map(\.packet) == [[1], [2]])
        #expect(try flow.submit(fragments(2, [100], completion: "answer")).isEmpty)
        // The first buffer back goes to the waiting connection, not to the tenth fragment.
        let next = flow.complete(connectionHandle: 1, count: 1)
        #expect(next.map(\.packet) == [[100]])
        #expect(next.first?.completion == "answer")
    }

    @Test func queuedConnectionsTakeTurnsPacketByPacket() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 0)
        _ = try flow.submit(fragments(1, [1, 2, 3]))
        _ = try flow.submit(fragments(2, [4, 5]))
        _ = try flow.submit(fragments(3, [6]))
        var sent: [UInt8] = []
        sent += flow.configure(bufferCount: 3).flatMap(\.packet)
        for handle in [UInt16(1), 2, 3, 1, 2, 3] { sent += flow.complete(connectionHandle: handle, count: 1).flatMap(\.packet) }
        #expect(sent == [1, 4, 6, 2, 5, 3])
    }

    @Test func aConnectionThatStopsAcknowledgingLeavesABufferForTheOthers() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 4)
        // Connection 1 alone may use every buffer...
        #expect(try flow.submit(fragments(1, [1, 2, 3, 4, 5, 6])).count == 4)
        _ = flow.complete(connectionHandle: 1, count: 4)
        // ...but once another link has sent, no more than all but one. Its peer never
        // acknowledges from here on, and connection 2 still gets a buffer.
        _ = try flow.submit(fragments(2, [7]))
        _ = flow.complete(connectionHandle: 2, count: 1)
        _ = try flow.submit(fragments(1, [8, 9, 10, 11, 12]))
        #expect(flow.inFlightCount(connectionHandle: 1) == 3)
        #expect(flow.freeBuffers == 1)
        #expect(try flow.submit(fragments(2, [13])).map(\.packet) == [[13]])
    }

    @Test func aFullSendQueueRefusesThePDUAndKeepsTheOthers() throws {
        var flow = ACLFlowControl<String>(queuedByteLimit: 10)
        _ = try flow.submit(fragments(1, [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(throws: Flow.QueueFull(connectionHandle: 1)) { try flow.submit(fragments(1, [9, 10, 11])) }
        #expect(flow.refusedCount == 1)
        #expect(flow.queuedBytes(connectionHandle: 1) == 8)
        // The limit is per connection...
        #expect(try flow.submit(fragments(2, [1, 2, 3])).isEmpty)
        // ...and an empty queue takes one PDU of any size.
        _ = flow.configure(bufferCount: 20)
        _ = flow.complete(connectionHandle: 1, count: 8)
        #expect(try flow.submit(fragments(1, Array(repeating: 0, count: 15))).count == 15)
        #expect(flow.queuedBytes(connectionHandle: 1) == 0)
    }

    @Test func disconnectionFreesTheConnectionsBuffersAndDropsItsQueue() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = try flow.submit(fragments(1, [1, 2, 3], completion: "lost"))
        _ = try flow.submit(fragments(2, [4], completion: "other"))
        let (dropped, send) = flow.disconnect(connectionHandle: 1)
        #expect(dropped.map(\.packet) == [[3]])
        #expect(dropped.compactMap(\.completion) == ["lost"])
        #expect(send.map(\.packet) == [[4]])
        #expect(send.first?.completion == "other")
        #expect(flow.inFlightCount(connectionHandle: 1) == 0)
        #expect(flow.freeBuffers == 1)
        // A late Number Of Completed Packets for the dead handle frees nothing more.
        _ = flow.complete(connectionHandle: 1, count: 2)
        #expect(flow.freeBuffers == 1)
    }

    @Test func reconfiguringKeepsTheBuffersInUse() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 4)
        _ = try flow.submit(fragments(1, [1, 2, 3]))
        #expect(flow.configure(bufferCount: 2).isEmpty)
        #expect(flow.freeBuffers == 0)
        _ = flow.complete(connectionHandle: 1, count: 3)
        #expect(flow.freeBuffers == 2)
    }

    @Test func removeAllEmptiesTheQueueAndFreesEverything() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 1)
        _ = try flow.submit(fragments(1, [1, 2], completion: "a"))
        let removed = flow.removeAll()
        #expect(removed.map(\.packet) == [[2]])
        #expect(flow.queuedCount == 0)
        #expect(flow.freeBuffers == 1)
        #expect(flow.inFlightCount(connectionHandle: 1) == 0)
    }

    /// A model of the controller's buffers against random submissions, completions (true,
    /// stale and excessive) and disconnections, seeded so a failure replays: the free count
    /// never passes the total, matches the model at every step, every PDU ends exactly once
    /// (sent or dropped with its link), and once the links are gone every buffer is back.
    @Test(arguments: [UInt64(1), 2, 3, 42, 1234])
    func creditsFollowTheModelAndAllComeBack(seed: UInt64) throws {
        var generator = SeededRandomNumberGenerator(seed: seed)
        let total = Int.random(in: 1...8, using: &generator)
        var flow = ACLFlowControl<String>(queuedByteLimit: 64)
        _ = flow.configure(bufferCount: total)
        var outstanding: [UInt16: Int] = [:]
        var submitted: Set<String> = []
        var ended: [String] = []
        func account(_ sent: [Flow.Fragment]) {
            for fragment in sent {
                outstanding[fragment.connectionHandle, default: 0] += 1
                if let completion = fragment.completion { ended.append(completion) }
            }
        }
        for step in 0..<3000 {
            let handle = UInt16.random(in: 1...4, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                let tag = "\(step)"
                do {
                    account(try flow.submit(fragments(handle, Array(repeating: 0, count: Int.random(in: 1...4, using: &generator)), completion: tag)))
                    submitted.insert(tag)
                } catch {
                    try #require(flow.queuedBytes(connectionHandle: handle) > 0)
                }
            case 5..<9:
                let count = Int.random(in: 0...5, using: &generator)
                outstanding[handle, default: 0] -= min(count, outstanding[handle] ?? 0)
                account(flow.complete(connectionHandle: handle, count: count))
            default:
                outstanding[handle] = 0
                let (dropped, send) = flow.disconnect(connectionHandle: handle)
                ended += dropped.compactMap(\.completion)
                account(send)
            }
            let inFlight = outstanding.values.reduce(0, +)
            try #require(inFlight <= total)
            try #require(flow.freeBuffers == total - inFlight)
            for handle in UInt16(1)...4 {
                try #require(flow.inFlightCount(connectionHandle: handle) == outstanding[handle] ?? 0)
                try #require(flow.inFlightCount(connectionHandle: handle) <= max(1, total))
            }
        }
        for handle in UInt16(1)...4 {
            let (dropped, send) = flow.disconnect(connectionHandle: handle)
            ended += dropped.compactMap(\.completion)
            account(send)
        }
        #expect(flow.freeBuffers == total)
        #expect(flow.queuedCount == 0)
        #expect(ended.count == Set(ended).count, "a PDU ended twice")
        #expect(submitted.subtracting(ended).sorted() == [], "PDUs never sent nor dropped")
    }
}
