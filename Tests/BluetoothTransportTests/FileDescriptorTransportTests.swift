import BluetoothTransport
import Glibc
import Synchronization
import Testing

/// The transport contract of `HCITransport`, checked over socket pairs.
@Suite("File descriptor transport", .timeLimit(.minutes(1)))
struct FileDescriptorTransportTests {
    @Test func datagramFramingDeliversOnePacketPerRead() async throws {
        let (local, peer) = try TestDescriptor.socketPair(type: SOCK_SEQPACKET)
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .datagram)
        defer { transport.closeInBackground() }
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)

        try peer.writeAll(H4DeframerTests.resetComplete.framed)
        try peer.writeAll(H4DeframerTests.longACL.framed)
        let events = try await recorder.waitForEvents(count: 2)
        #expect(events.compactMap(\.packet) == [H4DeframerTests.resetComplete, H4DeframerTests.longACL])

        // Each send is one datagram holding exactly one framed packet.
        try transport.send(H4DeframerTests.reset)
        try transport.send(H4DeframerTests.longACL)
        #expect(try peer.receiveDatagram() == H4DeframerTests.reset.framed)
        #expect(try peer.receiveDatagram() == H4DeframerTests.longACL.framed)
    }

    @Test func datagramsQueuedBeforeAWakeUpComeAsOneBatch() async throws {
        let (local, peer) = try TestDescriptor.socketPair(type: SOCK_SEQPACKET)
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .datagram)
        defer { transport.closeInBackground() }
        // Queued before the reader starts: its first wake-up finds all three.
        try peer.writeAll(H4DeframerTests.resetComplete.framed)
        try peer.writeAll(H4DeframerTests.longACL.framed)
        try peer.writeAll(H4DeframerTests.resetComplete.framed)
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)
        let events = try await recorder.waitForEvents(count: 3)
        #expect(events.compactMap(\.packet) == [H4DeframerTests.resetComplete, H4DeframerTests.longACL, H4DeframerTests.resetComplete])
        #expect(recorder.batchSizes == [3])
    }

    /// A controller that stops reading once held a writer (and the HCI layer's lock) for ever.
    @Test func aWriteThatMakesNoProgressEndsTheTransport() async throws {
        let (local, peer) = try TestDescriptor.socketPair()
        defer { _ = peer }
        let transport = try FileDescriptorTransport(name: "stuck", fileDescriptor: local.take(), framing: .stream,
                                                    writeStallLimit: .milliseconds(100))
        defer { transport.closeInBackground() }
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)
        // The peer never reads: the socket's buffers fill, then a write waits and gives up.
        let writer = Task.detached { () -> TransportError? in
            for sequence in 0..<1_000 {
                do {
                    try transport.send(Self.numberedPacket(sender: 0, sequence: sequence % 256))
                } catch let error as TransportError {
                    return error
                } catch {
                    return nil
                }
            }
            return nil
        }
        let error: TransportError? = await writer.value
        guard case .connectionLost("stuck", _)? = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
        let reason = try await recorder.waitForClose()
        guard case .connectionLost("stuck", _)? = reason else {
            Issue.record("the receiver should hear why the transport ended, got \(String(describing: reason))")
            return
        }
        #expect(throws: TransportError.self) { try transport.send(H4DeframerTests.reset) }
    }

    @Test func datagramWithTrailingBytesClosesWithFramingError() async throws {
        let (local, peer) = try TestDescriptor.socketPair(type: SOCK_SEQPACKET)
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .datagram)
        defer { transport.closeInBackground() }
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)
        try peer.writeAll(H4DeframerTests.reset.framed + [0x00])
        let reason = try await recorder.waitForClose()
        guard case .framing("test", _)? = reason else {
            Issue.record("expected a framing error, got \(String(describing: reason))")
            return
        }
        #expect(recorder.packets.isEmpty)
    }

    @Test func closeBeforeStartStillEndsWithClosedNil() async throws {
        let (local, peer) = try TestDescriptor.socketPair()
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .stream)
        try peer.writeAll(H4DeframerTests.resetComplete.framed)
        try await transport.closeWithTimeout()
        #expect(throws: TransportError.closed("test")) { try transport.send(H4DeframerTests.reset) }
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)
        let reason = try await recorder.waitForClose()
        #expect(reason == nil)
        // The packet waiting in the socket is not delivered after close().
        #expect(recorder.packets.isEmpty)
        #expect(recorder.events.count == 1)
    }

    @Test func closeFromInsideTheReceiverDoesNotDeadlock() async throws {
        let (local, peer) = try TestDescriptor.socketPair()
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .stream)
        defer { transport.closeInBackground() }
        let recorder = EventRecorder()
        transport.start { event in
            recorder.record(event)
            if case .packets = event { transport.close() }
        }
        // The receiver closes the transport from inside its first batch; a packet written
        // after that is never delivered.
        try peer.writeAll(H4DeframerTests.resetComplete.framed)
        let reason = try await recorder.waitForClose()
        #expect(reason == nil)
        try? peer.writeAll(H4DeframerTests.sco.framed)
        #expect(recorder.packets == [H4DeframerTests.resetComplete])
        #expect(recorder.events.count == 2, "the batch, then closed: \(recorder.events)")
    }

    @Test func secondStartIsIgnored() async throws {
        let (local, peer) = try TestDescriptor.socketPair()
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .stream)
        defer { transport.closeInBackground() }
        let first = EventRecorder()
        let second = EventRecorder()
        transport.start(receiver: first.receiver)
        transport.start(receiver: second.receiver)
        try peer.writeAll(H4DeframerTests.resetComplete.framed)
        try await first.waitForEvents(count: 1)
        try await transport.closeWithTimeout()
        #expect(first.events.count == 2)
        #expect(second.events.isEmpty)
    }

    @Test func sendToAVanishedPeerThrowsInsteadOfRaisingSIGPIPE() throws {
        let (local, peer) = try TestDescriptor.socketPair()
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .stream)
        defer { transport.closeInBackground() }
        peer.close()
        // With a plain write(2) the default SIGPIPE action would kill the test process here.
        #expect(throws: TransportError.writeFailed("test", errno: EPIPE)) {
            try transport.send(H4DeframerTests.reset)
        }
    }

    @Test func concurrentSendsNeverInterleaveAndKeepEachSendersOrder() async throws {
        let (local, peer) = try TestDescriptor.socketPair()
        // Packets much larger than the socket buffer are written in many partial writes, with
        // waits for space in between: exactly where an unlocked writer would interleave.
        var bufferSize: Int32 = 16_384
        _ = setsockopt(local.raw, SOL_SOCKET, SO_SNDBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .stream)
        defer { transport.closeInBackground() }

        let senders = 4
        let packetsPerSender = 40
        let totalBytes = senders * packetsPerSender * Self.numberedPacket(sender: 0, sequence: 0).framed.count

        async let received = onNewThread(timeout: .seconds(60)) { try peer.readExactly(totalBytes, timeout: .seconds(60)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    try await onNewThread(timeout: .seconds(60)) {
                        for sequence in 0..<packetsPerSender {
                            try transport.send(Self.numberedPacket(sender: sender, sequence: sequence))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }

        var deframer = H4Deframer()
        let packets = try deframer.append(try await received)
        #expect(packets.count == senders * packetsPerSender)
        for sender in 0..<senders {
            let mine = packets.filter { Array($0.bytes)[4] == UInt8(sender) }
            #expect(mine == (0..<packetsPerSender).map { Self.numberedPacket(sender: sender, sequence: $0) })
        }
    }

    @Test func closeWakesASenderWaitingForBufferSpace() async throws {
        let (local, peer) = try TestDescriptor.socketPair()
        defer { peer.close() }
        // Fill the socket buffer before handing the socket over: the next send must wait.
        _ = fcntl(local.raw, F_SETFL, fcntl(local.raw, F_GETFL) | O_NONBLOCK)
        let filler = [UInt8](repeating: 0, count: 4096)
        while filler.withUnsafeBytes({ Glibc.send(local.raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 {}
        #expect(errno == EAGAIN)
        let transport = try FileDescriptorTransport(name: "test", fileDescriptor: local.take(), framing: .stream)

        let sending = Mutex(false)
        async let outcome = onNewThread { () -> TransportError? in
            sending.withLock { $0 = true }
            do throws(TransportError) {
                try transport.send(H4DeframerTests.longACL)
                return nil
            } catch {
                return error
            }
        }
        // Close once the sender has started; if the wake-up were missing, close() (which
        // needs the write lock) and the send would both hang and the timeouts would fire.
        try await onNewThread {
            while !sending.withLock({ $0 }) { sched_yield() }
            transport.close()
        }
        let error = try await outcome
        #expect(error == .closed("test"))
    }

    /// An ACL packet with 60000 bytes of data: the sender's number, the sequence number,
    /// then filler that differs per sender and per position.
    @Sendable static func numberedPacket(sender: Int, sequence: Int) -> H4Packet {
        let length = 60_000
        let filler = (0..<(length - 2)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ sender) }
        let header: [UInt8] = [0x01, 0x00, UInt8(length & 0xFF), UInt8(length >> 8)]
        return H4Packet(.acl, header + [UInt8(sender), UInt8(sequence)] + filler)
    }
}

extension TestDescriptor {
    /// Receives one datagram (`SOCK_SEQPACKET`), up to the largest HCI packet.
    func receiveDatagram() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 70_000)
        let count = buffer.withUnsafeMutableBytes { recv(raw, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        guard count >= 0 else { throw TestFailure("recv failed: \(String(cString: strerror(errno)))") }
        return Array(buffer[0..<count])
    }
}
