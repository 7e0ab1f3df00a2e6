@testable import Bluejay
import Testing

struct Item: Identifiable, Equatable {
    let id: UInt64
}

@Suite("FIFO queue", .timeLimit(.minutes(1)))
struct FIFOQueueTests {
    @Test("Runs one element at a time in arrival order")
    func order() {
        var queue = FIFOQueue<Item>()
        #expect(queue.enqueue(Item(id: 1)) == Item(id: 1))
        #expect(queue.enqueue(Item(id: 2)) == nil, "the second waits while the first runs")
        #expect(queue.enqueue(Item(id: 3)) == nil)
        #expect(queue.running == Item(id: 1))
        #expect(queue.count == 3)
        #expect(queue.finish(1) == Item(id: 2))
        #expect(queue.finish(2) == Item(id: 3))
        #expect(queue.finish(3) == nil)
        #expect(queue.isIdle)
    }

    @Test("An event for an operation that is not running changes nothing")
    func unknownFinishIgnored() {
        var queue = FIFOQueue<Item>()
        _ = queue.enqueue(Item(id: 1))
        _ = queue.enqueue(Item(id: 2))
        #expect(queue.finish(2) == nil, "2 waits; finishing it must not start anything")
        #expect(queue.finish(99) == nil)
        #expect(queue.running == Item(id: 1))
        #expect(queue.finish(1) == Item(id: 2))
        #expect(queue.finish(1) == nil, "finishing twice is ignored")
        #expect(queue.running == Item(id: 2))
    }

    @Test("At the front runs next")
    func front() {
        var queue = FIFOQueue<Item>()
        _ = queue.enqueue(Item(id: 1))
        _ = queue.enqueue(Item(id: 2))
        _ = queue.enqueue(Item(id: 3), atFront: true)
        #expect(queue.finish(1) == Item(id: 3))
        #expect(queue.finish(3) == Item(id: 2))
    }

    @Test("Suspended queues hold requests until resumed")
    func suspension() {
        var queue = FIFOQueue<Item>(suspended: true)
        #expect(queue.enqueue(Item(id: 1)) == nil)
        #expect(queue.enqueue(Item(id: 2)) == nil)
        #expect(queue.running == nil)
        #expect(queue.resume() == Item(id: 1))
        #expect(queue.resume() == nil, "resuming again starts nothing more while one runs")
        queue.suspend()
        #expect(queue.finish(1) == nil, "suspended: the next one waits")
        #expect(queue.resume() == Item(id: 2))
    }

    @Test("Waiting elements can be taken out")
    func removal() {
        var queue = FIFOQueue<Item>()
        _ = queue.enqueue(Item(id: 1))
        _ = queue.enqueue(Item(id: 2))
        _ = queue.enqueue(Item(id: 3))
        _ = queue.enqueue(Item(id: 4))
        #expect(queue.removeWaiting(1) == nil, "the running one is not waiting")
        #expect(queue.removeWaiting(3) == Item(id: 3))
        #expect(queue.removeWaiting { $0.id.isMultiple(of: 2) } == [Item(id: 2), Item(id: 4)])
        #expect(queue.contains(1))
        #expect(!queue.contains(2))
        #expect(queue.finish(1) == nil)
        #expect(queue.isIdle)
    }
}
