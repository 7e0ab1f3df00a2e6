import BluetoothCore
@testable import BluetoothHost
import Logging
import Testing
import TestSupport

/// An ATT transaction timeout ends only the link of the bearer that timed out (Core 6.0, Vol 3,
/// Part F, 3.3.3): the report of an ended link's bearer, reaching the host actor after the next
/// link took the handle, leaves that link up.
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
}
