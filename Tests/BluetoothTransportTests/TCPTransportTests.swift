import BluetoothCore
import BluetoothTransport
import Glibc
import Testing

@Suite("TCP transport", .timeLimit(.minutes(1)))
struct TCPTransportTests {
    /// A transport connected to a test server, and the server's side of the connection.
    struct Connection {
        let transport: any HCITransport
        let peer: TestDescriptor
        let recorder = EventRecorder()

        init() throws {
            let (listener, port) = try TestDescriptor.listenTCP()
            // connect() completes from the kernel's backlog, before accept().
            transport = try SystemTransports.open("tcp:127.0.0.1:\(port)")
            peer = try listener.accept()
            transport.start(receiver: recorder.receiver)
        }
    }

    @Test func nameIsTheSpecification() throws {
        let (listener, port) = try TestDescriptor.listenTCP()
        let transport = try TCPTransport.connect(host: "127.0.0.1", port: port)
        defer { transport.closeInBackground() }
        _ = try listener.accept()
        #expect(transport.name == "tcp:127.0.0.1:\(port)")
        #expect(transport.framing == .stream)
    }

    @Test func sentPacketArrivesByteExact() throws {
        let connection = try Connection()
        defer { connection.transport.closeInBackground() }
        try connection.transport.send(H4DeframerTests.reset)
        try connection.transport.send(H4DeframerTests.longACL)
        let expected = H4DeframerTests.reset.framed + H4DeframerTests.longACL.framed
        #expect(try connection.peer.readExactly(expected.count) == expected)
    }

    @Test func packetsSentInOddChunksArriveInOrder() async throws {
        let connection = try Connection()
        defer { connection.transport.closeInBackground() }
        let bytes = H4DeframerTests.resetComplete.framed + H4DeframerTests.longACL.framed
        // Split inside the first header, across the packet boundary, and inside the payload.
        for range in [0..<1, 1..<3, 3..<9, 9..<200, 200..<bytes.count] {
            try connection.peer.writeAll(Array(bytes[range]))
        }
        let events = try await connection.recorder.waitForEvents(count: 2)
        #expect(events.compactMap(\.packet) == [H4DeframerTests.resetComplete, H4DeframerTests.longACL])
        #expect(connection.recorder.closeReasons.isEmpty)
    }

    @Test func receiverIsCalledOnOneThreadOtherThanTheSenders() async throws {
        let connection = try Connection()
        let senderThread = try await onNewThread { () throws -> pthread_t in
            try connection.transport.send(H4DeframerTests.reset)
            return pthread_self()
        }
        try connection.peer.writeAll(H4DeframerTests.resetComplete.framed)
        try connection.peer.writeAll(H4DeframerTests.sco.framed)
        try await connection.recorder.waitForEvents(count: 2)
        try await connection.transport.closeWithTimeout()
        let threads = connection.recorder.threads
        #expect(connection.recorder.events.count == 3)
        #expect(threads.count == 1)
        #expect(!threads.contains { pthread_equal($0, senderThread) != 0 })
    }

    @Test func peerClosingReportsConnectionLostExactlyOnce() async throws {
        let connection = try Connection()
        try connection.peer.writeAll(H4DeframerTests.resetComplete.framed)
        connection.peer.close()
        let reason = try await connection.recorder.waitForClose()
        guard case let .connectionLost(name, _)? = reason else {
            Issue.record("expected connectionLost, got \(String(describing: reason))")
            return
        }
        #expect(name == connection.transport.name)
        // A later local close changes nothing: close() waits for the reader thread to end,
        // so after it no further event can arrive.
        try await connection.transport.closeWithTimeout()
        #expect(connection.recorder.packets == [H4DeframerTests.resetComplete])
        #expect(connection.recorder.closeReasons.count == 1)
        #expect(throws: TransportError.self) { try connection.transport.send(H4DeframerTests.reset) }
    }

    @Test func localCloseReportsClosedNilOnceAndSendThrows() async throws {
        let connection = try Connection()
        try await connection.transport.closeWithTimeout()
        // No wait needed: close() returns after the reader has delivered `.closed(nil)`.
        let reasons = connection.recorder.closeReasons
        #expect(reasons.count == 1)
        #expect(reasons.first == .some(nil))
        try await connection.transport.closeWithTimeout()
        #expect(connection.recorder.closeReasons.count == 1)
        #expect(throws: TransportError.closed(connection.transport.name)) {
            try connection.transport.send(H4DeframerTests.reset)
        }
        // The socket was closed: the peer reads end of file.
        var byte: UInt8 = 0
        #expect(recv(connection.peer.raw, &byte, 1, Int32(MSG_DONTWAIT)) == 0)
    }

    @Test func malformedStreamClosesWithFramingError() async throws {
        let connection = try Connection()
        defer { connection.transport.closeInBackground() }
        // One write: the good packet and the bad indicator arrive in the same read.
        try connection.peer.writeAll(H4DeframerTests.resetComplete.framed + [0x07, 0x00, 0x00])
        let reason = try await connection.recorder.waitForClose()
        #expect(reason == .framing(connection.transport.name, .unknownOpcode(context: "H4 packet indicator", opcode: 0x07)))
        #expect(connection.recorder.packets == [H4DeframerTests.resetComplete])
    }

    @Test func connectionRefusedIsOpenFailedWithAHint() throws {
        let (socket, port) = try TestDescriptor.boundButNotListeningTCP()
        defer { socket.close() }
        let error = try #require(throws: TransportError.self) {
            _ = try SystemTransports.open(.tcp(host: "127.0.0.1", port: port))
        }
        guard case let .openFailed(name, code, hint) = error else {
            Issue.record("expected openFailed, got \(error)")
            return
        }
        #expect(name == "tcp:127.0.0.1:\(port)")
        #expect(code == ECONNREFUSED)
        #expect(hint.contains("bumble.apps.controllers tcp-server:_:\(port)"))
        #expect(error.description.contains("Connection refused"))
    }

    @Test(.enabled(if: TestDescriptor.hasIPv6Loopback, "needs an IPv6 loopback interface"))
    func connectsOverIPv6() throws {
        let (listener, port) = try TestDescriptor.listenTCPv6Loopback()
        let transport = try SystemTransports.open("tcp:[::1]:\(port)")
        defer { transport.closeInBackground() }
        let peer = try listener.accept()
        try transport.send(H4DeframerTests.reset)
        #expect(try peer.readExactly(4) == H4DeframerTests.reset.framed)
    }

    @Test func unresolvableHostIsOpenFailed() throws {
        let error = try #require(throws: TransportError.self) {
            _ = try SystemTransports.open("tcp:no-such-host.invalid:9000")
        }
        guard case let .openFailed(_, _, hint) = error else {
            Issue.record("expected openFailed, got \(error)")
            return
        }
        #expect(hint.contains("no-such-host.invalid"))
    }
}
