import BluetoothCore
@testable import BluetoothHost
import Logging
import Testing
import TestSupport

/// A link's timers end only that link: an ATT transaction timeout only the link of the bearer
/// that timed out (Core 6.0, Vol 3, Part F, 3.3.3), and a disconnection's deadline only the link
/// it was for. Reaching the host actor after the next link took the handle, they leave that
/// link up.
@Suite("Host: timers of an ended link", .timeLimit(.minutes(1)))
struct HostStaleLinkTimerTests {
    @Test func anEndedBearersTimeoutLeavesTheLinkOnItsHandle() async throws {
        let devices = try await TwoDevices()
        let (connection, incoming) = try await devices.connect()
        // The ended link's bearer: the same handle, another object.
        let stale = ATTBearer(connectionHandle: connection.handle, peer: connection.peer, logger: Logger(label: "test"), send: { _, _ in })
        await devices.central.disconnectAfterATTTimeout(of: stale)
        #expect(connection.isConnected, "not the timed-out bearer's link")

        // The link's own bearer: it goes.
        await devices.central.disconnectAfterATTTimeout(of: connection.link.bearer)
        #expect(!connection.isConnected)
        _ = try await incoming.waitForDisconnection()
        await devices.shutdown()
    }

    @Test func anEndedLinksDisconnectionDeadlineLeavesTheNextLinkOnItsHandle() async throws {
        var options = TwoDevices.Options()
        options.central.controller.reusesHandles = true
        let devices = try await TwoDevices(options)
        let (first, _) = try await devices.connect()
        try await devices.central.disconnect(first, reason: .remoteUserTerminatedConnection)
        let (second, incoming) = try await devices.connect()
        try #require(second.handle == first.handle, "the controller gave the next link the ended one's handle")

        // The first link's deadline fires late (its caller stopped waiting, so nobody cancelled it).
        await devices.central.disconnectionNeverReported(first, after: .seconds(2))
        #expect(second.isConnected, "the deadline was the ended link's")

        // The link's own deadline ends it (here, with no word to the controller, which still has it).
        await devices.central.disconnectionNeverReported(second, after: .seconds(2))
        #expect(!second.isConnected)
        #expect(incoming.isConnected, "the peer never heard of it: only the host gave the link up")
        await devices.shutdown()
    }
}
