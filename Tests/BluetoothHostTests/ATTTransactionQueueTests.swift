import Testing
@testable import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct ATTTransactionQueueTests {
    typealias Queue = ATTTransactionQueue<String>

    func read(_ id: UInt64, handle: UInt16 = 0x0003) -> Queue.Transaction {
        Queue.Transaction(id: id, request: .readRequest(.init(handle: handle)), ticket: "t\(id)")
    }

    func write(_ id: UInt64) -> Queue.Transaction {
        Queue.Transaction(id: id, request: .writeRequest(.init(handle: 0x0005, value: [1])), ticket: "t\(id)")
    }

    static let readResponse = ATTPDU.readResponse(.init(value: [0x42]))
    static let writeResponse = ATTPDU.writeResponse(.init())

    @Test func onlyOneRequestIsOutstanding() {
        var queue = Queue()
        #expect(queue.isIdle)
        #expect(queue.enqueue(read(1))?.id == 1)
        #expect(queue.enqueue(read(2)) == nil)
        #expect(queue.enqueue(write(3)) == nil)
        #expect(queue.outstanding?.id == 1)
        #expect(!queue.isIdle)
    }

    @Test func responsesAdvanceTheQueueInOrder() {
        var queue = Queue()
        _ = queue.enqueue(read(1))
        _ = queue.enqueue(write(2))
        _ = queue.enqueue(read(3))
        let first = queue.receive(Self.readResponse)
        #expect(first?.answered.ticket == "t1")
        #expect(first?.next?.id == 2)
        let second = queue.receive(Self.writeResponse)
        #expect(second?.answered.id == 2)
        #expect(second?.next?.id == 3)
        let third = queue.receive(Self.readResponse)
        #expect(third?.answered.id == 3)
        #expect(third?.next == nil)
        #expect(queue.isIdle)
    }

    @Test func aResponseOfAnotherKindIsIgnored() {
        var queue = Queue()
        _ = queue.enqueue(write(1))
        #expect(queue.receive(Self.readResponse) == nil)
        #expect(queue.receive(.errorResponse(.init(requestOpcode: .readRequest, handle: 5, code: .readNotPermitted))) == nil)
        #expect(queue.outstanding?.id == 1)
        #expect(queue.receive(Self.writeResponse)?.answered.id == 1)
    }

    @Test func aResponseWithNothingOutstandingIsIgnored() {
        var queue = Queue()
        #expect(queue.receive(Self.readResponse) == nil)
        #expect(queue.isIdle)
    }

    @Test func anErrorResponseNamingTheRequestAnswersIt() {
        var queue = Queue()
        _ = queue.enqueue(read(1))
        _ = queue.enqueue(read(2))
        let answer = queue.receive(.errorResponse(.init(requestOpcode: .readRequest, handle: 3, code: .readNotPermitted)))
        #expect(answer?.answered.id == 1)
        #expect(answer?.next?.id == 2)
    }

    @Test func cancellingAWaitingRequestRemovesIt() {
        var queue = Queue()
        _ = queue.enqueue(read(1))
        _ = queue.enqueue(read(2))
        _ = queue.enqueue(read(3))
        #expect(queue.cancel(id: 2) == "t2")
        #expect(queue.cancel(id: 2) == nil)
        #expect(queue.receive(Self.readResponse)?.next?.id == 3)
    }

    @Test func cancellingTheOutstandingRequestKeepsItsPlaceUntilTheResponse() {
        // No other request may go out before the response arrives (Vol 3, Part F, 3.3.2).
        var queue = Queue()
        _ = queue.enqueue(read(1))
        _ = queue.enqueue(read(2))
        #expect(queue.cancel(id: 1) == "t1")
        #expect(queue.outstanding?.id == 1)
        #expect(queue.outstanding?.ticket == nil)
        #expect(queue.cancel(id: 1) == nil, "resumed only once")
        let answer = queue.receive(Self.readResponse)
        #expect(answer?.answered.id == 1)
        #expect(answer?.answered.ticket == nil)
        #expect(answer?.next?.id == 2)
    }

    @Test func finishOutstandingEndsTheRequestWithoutAResponse() {
        var queue = Queue()
        #expect(queue.finishOutstanding() == nil)
        _ = queue.enqueue(read(1))
        _ = queue.enqueue(write(2))
        let finished = queue.finishOutstanding()
        #expect(finished?.answered.ticket == "t1")
        #expect(finished?.next?.id == 2)
        #expect(queue.outstanding?.id == 2)
    }

    @Test func removeAllReturnsEveryTicketStillAwaited() {
        var queue = Queue()
        _ = queue.enqueue(read(1))
        _ = queue.enqueue(read(2))
        _ = queue.enqueue(read(3))
        _ = queue.cancel(id: 1)
        #expect(queue.removeAll() == ["t2", "t3"])
        #expect(queue.isIdle)
        #expect(queue.enqueue(read(4))?.id == 4)
    }
}
