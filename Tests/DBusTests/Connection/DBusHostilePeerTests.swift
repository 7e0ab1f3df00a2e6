@testable import DBus
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A peer that lies, stalls or sends garbage (a ``ScriptedPeer``): the connection answers with
/// typed errors, closes when the stream cannot be trusted, and never hangs.
@Suite("D-Bus: a hostile peer", .timeLimit(.minutes(1)))
struct DBusHostilePeerTests {
    static func peerToPeer() -> DBusConnection.Options {
        var options = DBusConnection.Options()
        options.isBus = false
        return options
    }

    /// A connection to `peer` that has finished the handshake.
    func connect(_ peer: ScriptedPeer, options: DBusConnection.Options = peerToPeer()) async throws -> DBusConnection {
        async let lines = peer.acceptAndAuthenticate()
        let connection = try await DBusConnection.connect(to: peer.address, options: options)
        _ = try await lines
        return connection
    }

    @Test func theHandshakeIsExternalWithOurUidThenUnixFDsThenBegin() async throws {
        let peer = try ScriptedPeer()
        async let lines = peer.acceptAndAuthenticate()
        let connection = try await DBusConnection.connect(to: peer.address, options: Self.peerToPeer())
        defer { connection.close() }
        let uid = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
        #expect(try await lines == ["AUTH EXTERNAL \(uid)", "NEGOTIATE_UNIX_FD", "BEGIN"])
        #expect(connection.serverGUID == ScriptedPeer.guid)
        #expect(connection.canPassFileDescriptors)
        #expect(connection.uniqueName == nil)
    }

    @Test func aPeerThatRefusesDescriptorPassingIsStillUsable() async throws {
        let peer = try ScriptedPeer()
        async let lines = peer.acceptAndAuthenticate(["AUTH": ["OK \(ScriptedPeer.guid)"], "NEGOTIATE_UNIX_FD": ["ERROR not here"]])
        let connection = try await DBusConnection.connect(to: peer.address, options: Self.peerToPeer())
        defer { connection.close() }
        #expect(try await lines.last == "BEGIN")
        #expect(!connection.canPassFileDescriptors)
    }

    @Test func aRejectedHandshakeSaysWhatTheServerOffers() async throws {
        let peer = try ScriptedPeer()
        async let lines = peer.acceptAndAuthenticate(["AUTH": ["REJECTED DBUS_COOKIE_SHA1 ANONYMOUS"]])
        await #expect {
            try await DBusConnection.connect(to: peer.address, options: Self.peerToPeer())
        } throws: { error in
            guard case let DBusError.authenticationFailed(reason) = error else { return false }
            return reason.contains("DBUS_COOKIE_SHA1 ANONYMOUS")
        }
        _ = try? await lines
    }

    @Test func anEndlessHandshakeLineIsRefused() async throws {
        let peer = try ScriptedPeer()
        async let lines = peer.acceptAndAuthenticate(["AUTH": [String(repeating: "A", count: 20_000)]])
        await #expect {
            try await DBusConnection.connect(to: peer.address, options: Self.peerToPeer())
        } throws: { error in
            guard case let DBusError.authenticationFailed(reason) = error else { return false }
            return reason.contains("longer than")
        }
        _ = try? await lines
    }

    @Test func aServerThatNeverAnswersIsBoundedByTheConnectTimeoutAndByCancellation() async throws {
        let peer = try ScriptedPeer()
        async let lines = peer.acceptAndAuthenticate(["AUTH": ["silence"]])
        var options = Self.peerToPeer()
        options.connectTimeout = .milliseconds(200)
        await #expect {
            try await DBusConnection.connect(to: peer.address, options: options)
        } throws: { error in
            guard case let DBusError.authenticationFailed(reason) = error else { return false }
            return reason.contains("in time")
        }
        _ = try? await lines

        let silent = try ScriptedPeer()
        async let silentLines = silent.acceptAndAuthenticate(["AUTH": ["silence"]])
        var patient = Self.peerToPeer()
        patient.connectTimeout = .seconds(600)
        let attempt = Task { try await DBusConnection.connect(to: silent.address, options: patient) }
        #expect(try await silentLines.first?.hasPrefix("AUTH EXTERNAL") == true)
        attempt.cancel()
        await #expect(throws: DBusError.cancelled) { try await attempt.value }
    }

    @Test func callsAndAnswersTravelPeerToPeerAndAnAnswerToNoCallIsIgnored() async throws {
        let peer = try ScriptedPeer()
        let connection = try await connect(peer)
        defer { connection.close() }
        let call = Task { try await connection.call(destination: nil, path: .root, interface: "org.example.Peer", member: "Ask", arguments: ["q"]) }
        let received = try await peer.readMessage()
        #expect(received.member == "Ask")
        #expect(received.body == ["q"])
        var stray = DBusMessage(kind: .methodReturn, serial: 1, replySerial: received.serial &+ 1000, body: ["stray"])
        try await peer.send(stray)
        stray.serial = 2
        stray.replySerial = received.serial
        stray.body = ["answer"]
        try await peer.send(stray)
        #expect(try await call.value == ["answer"])
        #expect(connection.isConnected)
    }

    @Test func ourExportedObjectsAnswerAPeerToo() async throws {
        let peer = try ScriptedPeer()
        let connection = try await connect(peer)
        defer { connection.close() }
        try await connection.export([TestService.interface()], at: try DBusObjectPath("/t"))
        try await peer.send(DBusMessage(kind: .methodCall, serial: 7, path: try DBusObjectPath("/t"), interface: TestService.name, member: "Add",
                                        body: [.int32(2), .int32(3)]))
        let answer = try await peer.readMessage()
        #expect(answer.kind == .methodReturn)
        #expect(answer.replySerial == 7)
        #expect(answer.body == [.int32(5)])
    }

    /// A peer whose bytes break the protocol: the connection closes with the reason, calls
    /// waiting fail with ``DBusError/connectionClosed(reason:)``, and the socket is closed.
    func expectClosedByViolation(_ bytes: [UInt8], descriptors: [Int32] = [], reason: String) async throws {
        let peer = try ScriptedPeer()
        let connection = try await connect(peer)
        defer { connection.close() }
        let call = Task { try await connection.call(destination: nil, path: .root, interface: "org.example.Peer", member: "Ask") }
        _ = try await peer.readMessage()
        try await peer.write(bytes, descriptors: descriptors)
        await #expect {
            try await call.value
        } throws: { error in
            guard case let DBusError.connectionClosed(text) = error else { return false }
            return text.contains("broke the D-Bus protocol") && text.contains(reason)
        }
        #expect(!connection.isConnected)
        #expect(try await peer.clientClosed())
    }

    @Test func garbageInsteadOfAMessageClosesTheConnection() async throws {
        try await expectClosedByViolation(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8), reason: "not \"l\" (little-endian)")
    }

    @Test func aHeaderAnnouncingAHugeMessageClosesTheConnectionBeforeItArrives() async throws {
        // A method return announcing a body of 2 GiB: refused from its first 16 bytes.
        let header: [UInt8] = [UInt8(ascii: "l"), 2, 0, 1, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0]
        try await expectClosedByViolation(header, reason: "longer than the 134217728-byte limit")
    }

    @Test func aMessageNamingDescriptorsThatDidNotComeClosesTheConnection() async throws {
        var bogus = DBusMessage(kind: .signal, serial: 3, path: .root, interface: "org.example.Peer", member: "Fds")
        bogus.body = [.unixFD(DBusFileDescriptor(taking: -1)), .unixFD(DBusFileDescriptor(taking: -2))]
        let encoded = try bogus.encode()
        try await expectClosedByViolation(encoded.bytes, reason: "names 2 Unix file descriptor(s) but 0 came")
    }

    @Test func variantsNestedPastTheLimitCloseTheConnectionWithoutExhaustingTheStack() async throws {
        // A signal whose one argument is 10,000 variants deep: seven bytes a level on the wire.
        var body: [UInt8] = []
        for _ in 0..<10_000 { body += [1, UInt8(ascii: "v"), 0] }
        body += [1, UInt8(ascii: "y"), 0, 7]
        let fields: [DBusValue] = [
            .struct([.byte(1), .variant(.objectPath(.root))]), .struct([.byte(2), .variant("org.example.Peer")]),
            .struct([.byte(3), .variant("Deep")]), .struct([.byte(8), .variant(.signature(try DBusSignature("v")))]),
        ]
        var header = DBusMessageHeader(marker: UInt8(ascii: "l"), kind: 4, flags: 1, bodyLength: UInt32(body.count), serial: 9,
                                       fields: .array(of: DBusMessageHeader.fieldsType.arrayElement, fields))
        var writer = DBusWireWriter(byteOrder: .little)
        try header.code(&writer)
        writer.pad(to: 8)
        writer.append(body)
        try await expectClosedByViolation(writer.bytes, reason: "nest deeper than 64")
    }

    @Test func aHelloAnsweredWithNonsenseFailsTheConnect() async throws {
        let peer = try ScriptedPeer()
        async let lines = peer.acceptAndAuthenticate()
        var options = DBusConnection.Options()
        options.connectTimeout = .seconds(30)
        let attempt = Task { try await DBusConnection.connect(to: peer.address, options: options) }
        _ = try await lines
        let hello = try await peer.readMessage()
        #expect(hello.member == "Hello")
        #expect(hello.destination == "org.freedesktop.DBus")
        try await peer.send(DBusMessage(kind: .methodReturn, serial: 1, replySerial: hello.serial, body: [.uint32(42)]))
        await #expect {
            try await attempt.value
        } throws: { error in
            guard case let DBusError.unexpectedReply(reason) = error else { return false }
            return reason.contains("Hello")
        }
    }
}

private extension DBusType {
    var arrayElement: DBusType {
        if case let .array(element) = self { return element }
        return self
    }
}
