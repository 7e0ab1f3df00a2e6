import Testing
@testable import BluetoothHCI

@Suite(.timeLimit(.minutes(1))) struct ACLFlowControlTests {
    typealias Flow = ACLFlowControl<String>

    func fragments(_ handle: UInt16, _ tags: [UInt8], completion: String? = nil) -> [Flow.Fragment] {
        tags.enumerated().map { index, tag in
            Flow.Fragment(connectionHandle: handle, packet: [tag], completion: index == tags.count - 1 ? completion : nil)
        }
    }

    @Test func nothingIsSentBeforeTheBuffersAreKnown() {
        var flow = Flow()
        #expect(flow.submit(fragments(1, [1, 2])).isEmpty)
        #expect(flow.queuedCount == 2)
        #expect(flow.configure(bufferCount: 4).map(\.packet) == [[1], [2]])
        #expect(flow.freeBuffers == 2)
    }

    @Test func sendsNoMoreThanTheControllerBuffers() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 3)
        let sent = flow.submit(fragments(1, [1, 2, 3, 4, 5], completion: "pdu"))
        #expect(sent.map(\.packet) == [[1], [2], [3]])
        #expect(sent.allSatisfy { $0.completion == nil })
        #expect(flow.freeBuffers == 0)
        #expect(flow.queuedCount == 2)
        #expect(flow.inFlightCount(connectionHandle: 1) == 3)
    }

    @Test func completedPacketsReleaseQueuedFragmentsInOrder() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = flow.submit(fragments(1, [1, 2, 3], completion: "first"))
        _ = flow.submit(fragments(1, [4, 5], completion: "second"))
        let one = flow.complete(connectionHandle: 1, count: 1)
        #expect(one.map(\.packet) == [[3]])
        #expect(one.last?.completion == "first")
        let two = flow.complete(connectionHandle: 1, count: 2)
        #expect(two.map(\.packet) == [[4], [5]])
        #expect(two.last?.completion == "second")
        #expect(flow.queuedCount == 0)
    }

    @Test func completionsNeverCreditMoreThanWasSent() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = flow.submit(fragments(1, [1, 2]))
        // A stale handle, then more packets than were outstanding.
        #expect(flow.complete(connectionHandle: 7, count: 5).isEmpty)
        #expect(flow.freeBuffers == 0)
        _ = flow.complete(connectionHandle: 1, count: 9)
        #expect(flow.freeBuffers == 2)
        #expect(flow.inFlightCount(connectionHandle: 1) == 0)
        _ = flow.complete(connectionHandle: 1, count: 9)
        #expect(flow.freeBuffers == 2)
        let sent = flow.submit(fragments(1, [3, 4, 5]))
        #expect(sent.count == 2)
    }

    @Test func creditsAreCountedPerConnection() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = flow.submit(fragments(1, [1]))
        _ = flow.submit(fragments(2, [2]))
        _ = flow.submit(fragments(2, [3]))
        // Handle 1 had one packet out: a report of two for it frees only one buffer.
        #expect(flow.complete(connectionHandle: 1, count: 2).map(\.packet) == [[3]])
        #expect(flow.freeBuffers == 0)
        #expect(flow.inFlightCount(connectionHandle: 2) == 2)
    }

    @Test func disconnectionFreesTheConnectionsBuffersAndDropsItsQueue() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 2)
        _ = flow.submit(fragments(1, [1, 2, 3], completion: "lost"))
        _ = flow.submit(fragments(2, [4], completion: "other"))
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

    @Test func reconfiguringKeepsTheBuffersInUse() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 4)
        _ = flow.submit(fragments(1, [1, 2, 3]))
        #expect(flow.configure(bufferCount: 2).isEmpty)
        #expect(flow.freeBuffers == 0)
        _ = flow.complete(connectionHandle: 1, count: 3)
        #expect(flow.freeBuffers == 2)
    }

    @Test func removeAllEmptiesTheQueueAndFreesEverything() {
        var flow = Flow()
        _ = flow.configure(bufferCount: 1)
        _ = flow.submit(fragments(1, [1, 2], completion: "a"))
        let removed = flow.removeAll()
        #expect(removed.map(\.packet) == [[2]])
        #expect(flow.queuedCount == 0)
        #expect(flow.freeBuffers == 1)
        #expect(flow.inFlightCount(connectionHandle: 1) == 0)
    }

    @Test func freeBuffersStayWithinTheTotalWhateverTheControllerReports() throws {
        var flow = Flow()
        _ = flow.configure(bufferCount: 3)
        var generator = SystemRandomNumberGenerator()
        var outstanding: [UInt16: Int] = [:]
        for _ in 0..<2000 {
            let handle = UInt16.random(in: 1...3, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0, 1:
                for fragment in flow.submit(fragments(handle, [0, 0])) { outstanding[fragment.connectionHandle, default: 0] += 1 }
            case 2:
                let count = Int.random(in: 0...4, using: &generator)
                let credited = min(count, outstanding[handle] ?? 0)
                outstanding[handle, default: 0] -= credited
                for fragment in flow.complete(connectionHandle: handle, count: count) { outstanding[fragment.connectionHandle, default: 0] += 1 }
            default:
                outstanding[handle] = 0
                for fragment in flow.disconnect(connectionHandle: handle).send { outstanding[fragment.connectionHandle, default: 0] += 1 }
            }
            let inFlight = outstanding.values.reduce(0, +)
            try #require(inFlight <= 3)
            try #require(flow.freeBuffers == 3 - inFlight)
            for handle in UInt16(1)...3 { try #require(flow.inFlightCount(connectionHandle: handle) == outstanding[handle] ?? 0) }
        }
    }
}
