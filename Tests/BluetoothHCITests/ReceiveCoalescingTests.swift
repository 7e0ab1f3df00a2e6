import BluetoothCore
import BluetoothTransport
import Glibc
import Testing
@testable import BluetoothHCI

/// `HCIController`'s receive coalescing: when it pauses the reader (after pushed data that comes
/// faster than the window), and that anything the host sends or awaits ends or prevents the
/// pause. The window is a minute, far beyond every wait of these tests, so a pause that should
/// have ended shows as a test timeout, never as a delay; the pace of the data is simulated time.
@Suite(.timeLimit(.minutes(1))) struct ReceiveCoalescingTests {
    static let window: Duration = .seconds(60)

    /// A Handle Value Notification on connection 0x0040, as one ACL packet.
    static func notification(_ value: UInt8) -> H4Packet {
        let pdu: [UInt8] = [0x04, 0x00, 0x04, 0x00, 0x1B, 0x03, 0x00, value]
        return H4Packet(.acl, ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .firstFlushable, data: pdu).encode())
    }

    /// A controller on `transport` whose host calls every batch `content` and logs its size.
    func start(_ transport: any HCITransport, content: HCIBatchContent, clock: BluetoothClock = .continuous) -> (HCIController, AwaitableLog<Int>) {
        let controller = HCIController(transport: transport, clock: clock, coalescingWindow: Self.window)
        let batches = AwaitableLog<Int>()
        controller.start { batch in
            batches.append(batch.count)
            return content
        }
        return (controller, batches)
    }

    @Test func pushedDataComingFasterThanTheWindowPausesTheReaderAndASendEndsThePause() async throws {
        let transport = FakeTransport()
        let (controller, batches) = start(transport, content: .unsolicitedDataOnly)
        // The first value after a quiet spell is not paused for; the second, within the window, is.
        transport.deliver([Self.notification(1)])
        _ = await batches.wait { $0.count == 1 }
        #expect(!controller.isPausedForCoalescing)
        transport.deliver([Self.notification(2)])
        #expect(await eventually { controller.isPausedForCoalescing })
        // Queued behind the paused reader.
        transport.deliver([Self.notification(3)])
        #expect(batches.count == 2)
        controller.sendACL(connectionHandle: 0x0040, pdu: [0x01, 0x00, 0x04, 0x00, 0x0A], completion: nil)
        #expect(await batches.wait { $0.count == 3 } != nil, "the send ended the pause")
    }

    @Test func aSlowStreamIsNeverPaused() async throws {
        let time = ManualClock()
        let transport = FakeTransport()
        let (controller, batches) = start(transport, content: .unsolicitedDataOnly, clock: .manual(time))
        // One value every window and a millisecond: each is read at once, no pause between.
        for value in 1...3 {
            if value > 1 { time.advance(by: Self.window + .milliseconds(1)) }
            transport.deliver([Self.notification(UInt8(value))])
            #expect(await batches.wait { $0.count == value } != nil, "value \(value) was held back")
        }
        // Then one close behind: it is paused for.
        transport.deliver([Self.notification(4)])
        #expect(await eventually { controller.isPausedForCoalescing })
        controller.close()
    }

    @Test func aBatchOfSeveralPushedValuesPausesTheReader() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let peer = pair[1]
        defer { close(peer) }
        let transport = try FileDescriptorTransport(name: "pair", fileDescriptor: pair[0], framing: .stream)
        let (controller, batches) = start(transport, content: .unsolicitedDataOnly)
        // Two values in one write, read as one batch, after a quiet spell: a stream all the same.
        let bytes = [Self.notification(1), Self.notification(2)].flatMap(\.framed)
        try #require(bytes.withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
        #expect(await batches.wait { $0.reduce(0, +) == 2 } == [2])
        #expect(await eventually { controller.isPausedForCoalescing })
        try await withTimeout { controller.close() }
    }

    @Test func anyOtherBatchIsFollowedByTheNextAtOnce() async throws {
        let transport = FakeTransport()
        let (controller, batches) = start(transport, content: .other)
        transport.deliver([Self.notification(1)])
        transport.deliver([Self.notification(2)])
        #expect(await batches.wait { $0.count == 2 } != nil)
        #expect(!controller.isPausedForCoalescing)
    }

    @Test func aPendingCommandRulesOutThePause() async throws {
        let transport = FakeTransport()
        let (controller, batches) = start(transport, content: .unsolicitedDataOnly)
        // Never answered: the host waits for it.
        let pending = Task { try await controller.send(ReadBDADDRCommand(), timeout: .seconds(30)) }
        defer { pending.cancel() }
        _ = await transport.written.wait { !$0.isEmpty }
        transport.deliver([Self.notification(1)])
        transport.deliver([Self.notification(2)])
        #expect(await batches.wait { $0.count == 2 } != nil)
    }

    @Test func whatArrivesDuringThePauseIsReadAsOneBatch() async throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let peer = pair[1]
        defer { close(peer) }
        let transport = try FileDescriptorTransport(name: "pair", fileDescriptor: pair[0], framing: .stream)
        let (controller, batches) = start(transport, content: .unsolicitedDataOnly)
        // Credits, so that the send below goes out at once instead of waiting in the queue.
        controller.configureACLBuffers(dataLength: 27, count: 8)
        func write(_ packets: [H4Packet]) throws {
            let bytes = packets.flatMap(\.framed)
            try #require(bytes.withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
        }
        // Two values read apart, within the window: the reader pauses after the second.
        try write([Self.notification(1)])
        _ = await batches.wait { $0.count == 1 }
        try write([Self.notification(2)])
        #expect(await eventually { controller.isPausedForCoalescing })
        try write([Self.notification(3), Self.notification(4), Self.notification(5)])
        controller.sendACL(connectionHandle: 0x0040, pdu: [0x01, 0x00, 0x04, 0x00, 0x0A], completion: nil)
        let sizes = await batches.wait { $0.reduce(0, +) == 5 }
        #expect(sizes == [1, 1, 3])
        // Closing ends a pause too (the reader must finish before close returns).
        #expect(await eventually { controller.isPausedForCoalescing })
        try await withTimeout { controller.close() }
    }
}
