import Testing
@testable import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct AsyncSerialGateTests {
    @available(macOS 26, *)
    @Test func letsOneTaskThroughAtATimeInArrivalOrder() async throws {
        let gate = AsyncSerialGate()
        let order = AwaitableLog<Int>()
        try await gate.enter()
        // Each waiter enters, records itself and leaves. An immediate task runs until it
        // waits at the gate, so they queue behind the holder in this order.
        var tasks: [Task<Void, any Error>] = []
        for index in 1...5 {
            tasks.append(Task.immediate {
                try await gate.enter()
                order.append(index)
                gate.leave()
            })
        }
        #expect(order.count == 0, "nobody passes while the gate is held")
        gate.leave()
        let passed = try #require(await order.wait(forCount: 5))
        #expect(passed == [1, 2, 3, 4, 5])
        for task in tasks { try await withTimeout { try await task.value } }
    }

    @Test func aFreeGateIsEnteredAtOnceAndLeavingFreesIt() async throws {
        let gate = AsyncSerialGate()
        try await withTimeout { try await gate.enter() }
        gate.leave()
        try await withTimeout { try await gate.enter() }
        gate.leave()
    }

    @available(macOS 26, *)
    @Test func cancellingAWaiterRemovesItFromTheLine() async throws {
        let gate = AsyncSerialGate()
        try await gate.enter()
        let entered = AwaitableLog<String>()
        let cancelled = Task.immediate {
            try await gate.enter()
            entered.append("cancelled")
            gate.leave()
        }
        // It is waiting at the gate now.
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await withTimeout { try await cancelled.value } }

        let next = Task {
            try await gate.enter()
            entered.append("next")
            gate.leave()
        }
        gate.leave()
        try await withTimeout { try await next.value }
        #expect(entered.items == ["next"])
    }

    @Test func aTaskCancelledBeforeItWaitsDoesNotQueue() async throws {
        let gate = AsyncSerialGate()
        try await gate.enter()
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await gate.enter()
        }
        await #expect(throws: CancellationError.self) { try await withTimeout("the cancelled entry", .seconds(10)) { try await cancelled.value } }
        // Its place was not kept: the next waiter gets the gate as soon as it is left.
        let next = Task { try await gate.enter() }
        gate.leave()
        try await withTimeout { try await next.value }
    }
}
