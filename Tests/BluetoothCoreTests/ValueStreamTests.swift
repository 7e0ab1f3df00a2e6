import BluetoothCore
import Synchronization
import Testing

@Suite("Value streams", .timeLimit(.minutes(1)))
struct ValueStreamTests {
    struct Failure: Error, Equatable {}

    /// Counts the calls of an onTermination handler.
    final class Calls: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    @Test func valuesComeInOrderAndTheStreamEndsAfterThem() async throws {
        let (stream, continuation) = ValueStream.makeStream(of: Int.self)
        #expect(continuation.yield(contentsOf: [1, 2, 3]) == .enqueued)
        continuation.yield(4)
        continuation.finish()
        var received: [Int] = []
        for try await value in stream { received.append(value) }
        #expect(received == [1, 2, 3, 4])
    }

    @Test func aWaitingConsumerIsWokenByAYield() async throws {
        let (stream, continuation) = ValueStream.makeStream(of: Int.self)
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            return try await [iterator.next(), iterator.next()]
        }
        continuation.yield(contentsOf: [7])
        continuation.yield(contentsOf: [8])
        #expect(try await consumer.value == [7, 8])
    }

    @Test func theBufferKeepsTheOldestValuesUpToItsLimit() async throws {
        let (stream, continuation) = ValueStream.makeStream(of: Int.self, limit: 3)
        #expect(continuation.yield(contentsOf: [1, 2]) == .enqueued)
        #expect(continuation.yield(contentsOf: [3, 4, 5]) == .dropped(2))
        #expect(continuation.yield(6) == .dropped(1))
        continuation.finish()
        var received: [Int] = []
        for try await value in stream { received.append(value) }
        #expect(received == [1, 2, 3])
    }

    @Test func anErrorIsThrownOnceAfterTheBufferedValues() async throws {
        let (stream, continuation) = ValueStream.makeStream(of: Int.self)
        continuation.yield(contentsOf: [1, 2])
        continuation.finish(throwing: Failure())
        continuation.yield(3)
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == 2)
        await #expect(throws: Failure()) { try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test func aWaitingConsumerHearsOfTheEnd() async throws {
        let (stream, continuation) = ValueStream.makeStream(of: Int.self)
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            return try await iterator.next()
        }
        continuation.finish(throwing: Failure())
        await #expect(throws: Failure()) { try await consumer.value }
    }

    @Test func yieldsAfterTheEndAreRefused() {
        let (_, continuation) = ValueStream.makeStream(of: Int.self)
        continuation.finish()
        #expect(continuation.yield(1) == .terminated)
        #expect(continuation.isTerminated)
    }

    @Test func terminationRunsOnceAtFinish() {
        let (_, continuation) = ValueStream.makeStream(of: Int.self)
        let calls = Calls()
        continuation.onTermination = { calls.add() }
        continuation.finish()
        continuation.finish()
        #expect(calls.value == 1)
    }

    @Test func aConsumerThatGoesAwayEndsTheStream() async throws {
        let calls = Calls()
        var continuation: ValueStream<Int>.Continuation?
        do {
            let made = ValueStream.makeStream(of: Int.self)
            continuation = made.continuation
            made.continuation.onTermination = { calls.add() }
            made.continuation.yield(contentsOf: [1, 2, 3])
            for try await value in made.stream where value == 2 { break }
        }
        #expect(calls.value == 1)
        #expect(continuation?.yield(4) == .terminated)
    }

    @Test func cancellingAWaitingConsumerEndsTheStream() async throws {
        let (stream, continuation) = ValueStream.makeStream(of: Int.self)
        let calls = Calls()
        continuation.onTermination = { calls.add() }
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            return try await iterator.next()
        }
        consumer.cancel()
        #expect(try await consumer.value == nil)
        #expect(continuation.isTerminated)
        #expect(calls.value == 1)
    }

    @Test func aHandlerSetAfterTheEndRunsAtOnce() {
        let (_, continuation) = ValueStream.makeStream(of: Int.self)
        continuation.finish()
        let calls = Calls()
        continuation.onTermination = { calls.add() }
        #expect(calls.value == 1)
    }
}
