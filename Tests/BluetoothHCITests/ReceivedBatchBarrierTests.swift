import BluetoothCore
import BluetoothTransport
import Dispatch
import Synchronization
import Testing
@testable import BluetoothHCI

/// A command's answer resumes its caller while the batch it came in is still being read, before
/// the events that came with it reach the receiver. `waitForReceivedBatches()` is how a caller
/// that must see those events first (a connection that came through advertising it just
/// stopped, before the address it was made with changes) waits for them.
@Suite(.timeLimit(.minutes(1))) struct ReceivedBatchBarrierTests {
    static let connection = HCIEvent.le(.connectionComplete(LEConnectionCompleteEvent(
        connectionHandle: 0x0040, role: .peripheral, peerAddressType: .random, peerAddress: BluetoothAddress(rawValue: 0xC0FF_EE00_0001),
        connectionInterval: 0x18, peripheralLatency: 0, supervisionTimeout: 0x48)))

    @Test func theEventsOfTheAnswersBatchReachTheReceiverBeforeTheWaitEnds() async throws {
        let transport = FakeTransport()
        let controller = HCIController(transport: transport)
        let received = Mutex(0)
        // The host is slow to take the batch: its receiver waits to be let go.
        let release = DispatchSemaphore(value: 0)
        controller.start { batch in
            release.wait()
            received.withLock { $0 += batch.count }
            return .other
        }
        let answer = Task { try await controller.send(LESetAdvertisingEnableCommand(enable: false)) }
        _ = await transport.written.wait(forCount: 1)
        // The controller reports a connection, then answers the command, in one read.
        transport.deliverBatch([.event(Self.connection), .complete(LESetAdvertisingEnableCommand.opcode, returnParameters: [0])])
        _ = try await withTimeout { try await answer.value }
        #expect(received.withLock { $0 } == 0, "the caller is resumed before the receiver has the batch")

        let waiter = Task { () -> Int in
            await controller.waitForReceivedBatches()
            return received.withLock { $0 }
        }
        // Let the receiver go only once the waiter waits: a wait that did not would return now.
        let registered = await eventually { controller.deliveryWaiterCount == 1 }
        #expect(registered, "the wait must wait for the batch being read")
        release.signal()
        #expect(try await withTimeout { await waiter.value } == 1, "the connection's event reached the receiver first")

        // Nothing being read: the wait returns at once.
        try await withTimeout { await controller.waitForReceivedBatches() }
        transport.close()
        release.signal()
    }

    @Test func theWaitEndsWhenTheTransportCloses() async throws {
        let transport = FakeTransport()
        let controller = HCIController(transport: transport)
        let release = DispatchSemaphore(value: 0)
        let reading = Mutex(false)
        controller.start { batch in
            if case .transportClosed? = batch.last { return .other }
            reading.withLock { $0 = true }
            release.wait()
            return .other
        }
        transport.deliverBatch([.event(Self.connection)])
        #expect(await eventually { reading.withLock { $0 } })
        let waiter = Task { await controller.waitForReceivedBatches() }
        #expect(await eventually { controller.deliveryWaiterCount == 1 })
        release.signal()
        try await withTimeout { await waiter.value }
        transport.close()
        try await withTimeout { await controller.waitForReceivedBatches() }
    }
}
