@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

@Suite("Bluejay against the simulated UART device", .timeLimit(.minutes(1)))
struct UARTDeviceTests {
    /// `A5 LL HH` asks for N = 0xHHLL bytes, byte i = i % 256; anything else is echoed.
    static let responder = UARTDevice.Responder.script { command in
        guard command.count == 3, command[0] == 0xA5 else { return command }
        let count = Int(command[1]) | Int(command[2]) << 8
        return (0..<count).map { UInt8($0 % 256) }
    }

    @Test("writeAndAssemble joins an answer cut into random chunks, then the next one")
    func assembleRandomChunks() async throws {
        try await withSimulator { simulator, bluejay in
            let uart = try await simulator.addUARTDevice(.init(chunking: .random(1...20, seed: 3), responder: Self.responder))
            try await connect(bluejay, to: uart.device)
            let result: RunResult<[Data]> = try await callback("the background task") { done in
                bluejay.run(backgroundTask: { peripheral in
                    var answers: [Data] = []
                    try peripheral.writeAndAssemble(writeTo: UART.rx, value: Data([0xA5, 0x2C, 0x01]), listenTo: UART.tx,
                                                    expectedLength: 300, timeoutInSeconds: .seconds(15)) { (answer: Data) in
                        answers.append(answer)
                        return .done
                    }
                    try peripheral.writeAndAssemble(writeTo: UART.rx, value: Data("hello, uart".utf8), listenTo: UART.tx,
                                                    expectedLength: 11, timeoutInSeconds: .seconds(15)) { (answer: Data) in
                        answers.append(answer)
                        return .done
                    }
                    return answers
                }, completionOnMainThread: { done($0) })
            }
            let answers = try result.get()
            #expect(answers.count == 2)
            #expect(answers.first == Data((0..<300).map { UInt8($0 % 256) }))
            #expect(answers.last == Data("hello, uart".utf8))
            #expect(uart.received == [[0xA5, 0x2C, 0x01], Array("hello, uart".utf8)])
            let sizes = uart.answeredChunkSizes
            #expect(sizes.count == 2)
            let first = sizes.first ?? []
            #expect(first.reduce(0, +) == 300)
            #expect(first.allSatisfy { (1...20).contains($0) })
            #expect(Set(first).count > 3, "random sizes: \(first)")
            try await bluejay.disconnect()
            await expectIdle(bluejay, listeningTo: [UART.tx])
        }
    }

    @Test("Fixed chunks, one answer after the other, none larger than a notification")
    func fixedChunks() async throws {
        try await withSimulator { simulator, bluejay in
            let uart = try await simulator.addUARTDevice(.init(chunking: .fixed(7), responder: .echo))
            try await connect(bluejay, to: uart.device)
            let parts = Collected<Data>()
            bluejay.listen(to: UART.tx) { (result: ReadResult<Data>) in
                if case let .success(data) = result { parts.append(data) }
            }
            try await waitUntil("the subscription") { await !uart.device.subscribers(of: UARTDevice.txUUID).isEmpty }
            let first = Data((0..<30).map { UInt8($0) })
            let second = Data((100..<110).map { UInt8($0) })
            try await bluejay.write(to: UART.rx, value: first)
            try await bluejay.write(to: UART.rx, value: second, type: .withoutResponse)
            try await waitUntil("40 echoed bytes") { parts.all.reduce(0) { $0 + $1.count } == 40 }
            #expect(parts.all.map(\.count) == [7, 7, 7, 7, 2, 7, 3])
            #expect(parts.all.reduce(Data(), +) == first + second)
            try await bluejay.disconnect()
        }
    }

    @Test("An answer to a central that did not subscribe is not sent, and counted")
    func unsubscribedCentral() async throws {
        try await withSimulator { simulator, bluejay in
            let uart = try await simulator.addUARTDevice()
            try await connect(bluejay, to: uart.device)
            try await bluejay.write(to: UART.rx, value: Data([1, 2, 3]))
            try await waitUntil("the unsent answer") { uart.unsentAnswers == 1 }
            #expect(uart.answeredChunkSizes.isEmpty)
            try await bluejay.disconnect()
        }
    }

    @Test("Answers waiting to be sent are bounded: past the limit the newest is dropped and counted")
    func answerBufferBounded() async throws {
        let clock = ManualClock()
        try await withSimulator(simulatorClock: .manual(clock)) { simulator, bluejay in
            var configuration = UARTDevice.Configuration(chunking: .fixed(20), responder: .echo)
            configuration.chunkDelay = .seconds(1)
            configuration.answerBufferLimit = 2
            let uart = try await simulator.addUARTDevice(configuration)
            try await connect(bluejay, to: uart.device)
            try await bluejay.write(to: UART.rx, value: Data([1]))
            // The first answer is being sent: it waits for its chunk delay on the device's clock.
            try await clock.waitForSleepingTasks(1)
            for value: UInt8 in 2...5 { try await bluejay.write(to: UART.rx, value: Data([value])) }
            try await waitUntil("the two answers past the limit dropped") { uart.droppedAnswers == 2 }
            #expect(uart.received == [[1], [2], [3], [4], [5]], "every write was received")
            try await bluejay.disconnect()
        }
    }
}
