import BluetoothCore
import Testing

@Suite(.timeLimit(.minutes(1))) struct AsyncStreamFanOutTests {
    @Test func everyStreamGetsEveryElementInOrderAndFinishEndsThem() async {
        let fanOut = AsyncStreamFanOut<Int>()
        let first = fanOut.makeStream()
        let second = fanOut.makeStream()
        for value in 1...3 { fanOut.yield(value) }
        fanOut.finish()
        var firstValues: [Int] = []
        for await value in first { firstValues.append(value) }
        var secondValues: [Int] = []
        for await value in second { secondValues.append(value) }
        #expect(firstValues == [1, 2, 3])
        #expect(secondValues == [1, 2, 3])
    }

    @Test func aStreamMadeAfterFinishEndsAtOnceAndElementsBeforeItAreNotReplayed() async {
        let fanOut = AsyncStreamFanOut<Int>()
        fanOut.yield(1)
        let early = fanOut.makeStream()
        fanOut.yield(2)
        fanOut.finish()
        let late = fanOut.makeStream()
        fanOut.yield(3)
        var earlyValues: [Int] = []
        for await value in early { earlyValues.append(value) }
        var lateValues: [Int] = []
        for await value in late { lateValues.append(value) }
        #expect(earlyValues == [2])
        #expect(lateValues.isEmpty)
        #expect(fanOut.isEmpty)
    }

    @Test func aConsumerThatStopsLeaves() async {
        let fanOut = AsyncStreamFanOut<Int>()
        let task = Task {
            for await _ in fanOut.makeStream() {}
        }
        var turns = 0
        while fanOut.isEmpty, turns < 100_000 { await Task.yield(); turns += 1 }
        #expect(!fanOut.isEmpty, "the consumer is listening")
        task.cancel()
        await task.value
        #expect(fanOut.isEmpty, "a cancelled consumer's stream is removed")
    }

    @Test func aStreamNobodyReadsHoldsTheNewestUpToTheLimitAndCountsTheRest() async {
        let fanOut = AsyncStreamFanOut<Int>()
        #expect(fanOut.bufferLimit == 1_024)
        let idle = fanOut.makeStream()
        for value in 1...5_000 { fanOut.yield(value) }
        fanOut.finish()
        var values: [Int] = []
        for await value in idle { values.append(value) }
        #expect(values == Array(3_977...5_000), "the newest 1,024, in order")
        #expect(fanOut.droppedCount == 5_000 - 1_024)
    }

    @Test func aSlowStreamDoesNotMakeAnotherLoseAnything() async {
        let fanOut = AsyncStreamFanOut<Int>(bufferLimit: 4)
        let slow = fanOut.makeStream()
        let fast = fanOut.makeStream()
        var fastIterator = fast.makeAsyncIterator()
        var fastValues: [Int] = []
        for value in 1...10 {
            fanOut.yield(value)
            if let next = await fastIterator.next() { fastValues.append(next) }
        }
        fanOut.finish()
        var slowValues: [Int] = []
        for await value in slow { slowValues.append(value) }
        #expect(fastValues == Array(1...10))
        #expect(slowValues == [7, 8, 9, 10])
        #expect(fanOut.droppedCount == 6)
    }
}
