@testable import DBus
import Testing

/// The bus's own reply timeout (`reply_timeout`, here 2 s): the bus answers NoReply for a peer
/// that does not answer in time, whatever the caller's own timeout. The bound applies to every
/// call to a peer on this bus, so the test makes no other such call (at 300 ms, and once at 2 s
/// in a loaded first minute, an Echo to the server after it timed out too).
@Suite("D-Bus: the bus's reply timeout (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage),
       .privateBus(DBusDaemon.Configuration(replyTimeoutMilliseconds: 2_000)), .timeLimit(.minutes(1)))
struct DBusBusTimeoutTests {
    @Test func aPeerThatDoesNotAnswerInTimeGetsTheCallerNoReplyFromTheBus() async throws {
        let daemon = try suiteDaemon()
        let server = try await daemon.connect()
        let client = try await daemon.connect()
        let gate = Gate()
        defer {
            gate.releaseAll()
            server.close()
            client.close()
        }
        let path = try DBusObjectPath("/hang")
        try await server.export([TestService.interface(gate: gate)], at: path)
        await #expect {
            try await client.call(destination: server.uniqueName, path: path, interface: TestService.name, member: "Hang", timeout: .seconds(60))
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error else { return false }
            return name == .noReply && "\(error)".contains("did not answer in time")
        }
        // The handler did get the call (under load it may start after the bus gave up).
        try await waitUntil("the handler waits") { gate.waitingCount == 1 }
        // The handler's late answer is dropped by the bus; both connections go on. Each asks the
        // bus itself: a call to our server would be held to the bus's 2 s reply timeout as well,
        // which the in-process server's answer missed once in a loaded first minute of make test.
        gate.releaseAll()
        #expect(try await client.listNames().contains(try #require(server.uniqueName)))
        #expect(try await server.listNames().contains(try #require(client.uniqueName)))
    }
}
