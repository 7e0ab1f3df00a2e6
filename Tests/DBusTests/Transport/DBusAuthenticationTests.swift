@testable import DBus
import Testing

/// The SASL client as a state machine (D-Bus Specification, "Authentication Protocol").
@Suite("D-Bus SASL handshake")
struct DBusAuthenticationTests {
    static let guid = "0123456789abcdef0123456789abcdef"

    @Test func theGreetingIsANulByteThenAuthExternalWithTheUidInHex() {
        #expect(DBusAuthentication(uid: 1000, negotiateUnixFileDescriptors: true).greeting == [0] + Array("AUTH EXTERNAL 31303030\r\n".utf8))
        #expect(DBusAuthentication(uid: 0, negotiateUnixFileDescriptors: false).greeting == [0] + Array("AUTH EXTERNAL 30\r\n".utf8))
    }

    @Test func okThenAgreeUnixFDThenBegin() throws {
        var sasl = DBusAuthentication(uid: 1000, negotiateUnixFileDescriptors: true)
        let afterOK = try sasl.receive(Array("OK \(Self.guid)\r\n".utf8))
        #expect(afterOK == DBusAuthentication.Step(send: Array("NEGOTIATE_UNIX_FD\r\n".utf8)))
        let done = try sasl.receive(Array("AGREE_UNIX_FD\r\n".utf8))
        #expect(done.send == Array("BEGIN\r\n".utf8))
        #expect(done.outcome == .init(guid: Self.guid, unixFileDescriptors: true))
    }

    @Test func linesSplitAcrossReadsAndBytesAfterTheLastLine() throws {
        var sasl = DBusAuthentication(uid: 1, negotiateUnixFileDescriptors: false)
        // The OK line a byte at a time, except its last byte, which comes with what follows it.
        for byte in Array("OK \(Self.guid)\r".utf8) {
            let step = try sasl.receive([byte])
            #expect(step.send.isEmpty)
            #expect(step.outcome == nil)
        }
        let done = try sasl.receive(Array("\nlB".utf8))
        #expect(done.outcome == .init(guid: Self.guid, unixFileDescriptors: false))
        #expect(done.send == Array("BEGIN\r\n".utf8))
        // The server should not talk before BEGIN, but what it sent is handed on, not lost.
        #expect(done.leftover == Array("lB".utf8))
    }

    @Test func anErrorToNegotiateUnixFDMeansNoDescriptors() throws {
        var sasl = DBusAuthentication(uid: 1, negotiateUnixFileDescriptors: true)
        _ = try sasl.receive(Array("OK \(Self.guid)\r\n".utf8))
        let done = try sasl.receive(Array("ERROR \"not supported\"\r\n".utf8))
        #expect(done.outcome == .init(guid: Self.guid, unixFileDescriptors: false))
    }

    @Test("what a server may not answer", arguments: [
        "REJECTED EXTERNAL\r\n", "DATA 00\r\n", "ERROR\r\n", "OK notaguid\r\n", "OK \(guid)\n", "AGREE_UNIX_FD\r\n", "\u{1}\r\n", "BEGIN\r\n",
    ])
    func refused(_ answer: String) {
        var sasl = DBusAuthentication(uid: 1, negotiateUnixFileDescriptors: true)
        #expect(throws: DBusError.self) { try sasl.receive(Array(answer.utf8)) }
    }

    @Test func aServerThatNeverEndsItsLineOrKeepsTalkingIsCutOff() throws {
        var long = DBusAuthentication(uid: 1, negotiateUnixFileDescriptors: true)
        _ = try long.receive(Array(repeating: UInt8(ascii: "A"), count: DBusAuthentication.maximumLineLength))
        #expect(throws: DBusError.self) { try long.receive([UInt8(ascii: "A")]) }
        var chatty = DBusAuthentication(uid: 1, negotiateUnixFileDescriptors: true)
        _ = try chatty.receive(Array("OK \(Self.guid)\r\n".utf8))
        #expect(throws: DBusError.self) {
            for _ in 0..<DBusAuthentication.maximumLines { _ = try chatty.receive(Array("ERROR\r\n".utf8)) }
        }
    }
}
