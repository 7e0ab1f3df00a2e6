@testable import DBus
import Testing

/// The bus goes away (dbus-daemon killed, as when it restarts): calls waiting and signal streams
/// end with ``DBusError/connectionClosed(reason:)``, and new work is refused with it.
@Suite("D-Bus: the bus going away (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage), .timeLimit(.minutes(1)))
struct DBusConnectionLossTests {
    @Test func callsAndStreamsEndWhenTheBusDies() async throws {
        // Stopped below; should the test fail before, the daemon's deinit ends it.
        let daemon = try await DBusDaemon.start()
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
        var signals = try await client.signals(matching: DBusMatchRule(interface: "org.example.Signals")).makeAsyncIterator()
        let call = Task { try await client.call(destination: server.uniqueName, path: path, interface: TestService.name, member: "Hang") }
        try await waitUntil("the handler waits") { gate.waitingCount == 1 }

        await daemon.stop()

        await #expect {
            try await call.value
        } throws: { error in
            guard case let DBusError.connectionClosed(reason) = error else { return false }
            return reason == "the peer closed the connection"
        }
        await #expect {
            _ = try await signals.next()
        } throws: { error in
            guard case DBusError.connectionClosed = error else { return false }
            return true
        }
        #expect(!client.isConnected)
        #expect(throws: DBusError.connectionClosed(reason: "the peer closed the connection")) {
            try client.emitSignal(path: .root, interface: "org.example.Signals", member: "Late")
        }
        // The server's handler, whose caller is gone with the bus, is cancelled.
        try await waitUntil("the server's handler was cancelled") { gate.cancelledCount == 1 }
    }
}
