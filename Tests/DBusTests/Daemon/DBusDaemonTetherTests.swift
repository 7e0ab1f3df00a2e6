import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The test suites' private dbus-daemon must not outlive them.
@Suite("D-Bus: the private daemon's tether", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage), .timeLimit(.minutes(1)))
struct DBusDaemonTetherTests {
    /// Stopping closes the tether's pipe, which is what the kernel does when the tests die: the
    /// daemon must be gone after it, not left running, and its wrapper must have exited on its
    /// own (the tether did it, not stop()'s fallback signals).
    @Test func theDaemonEndsWhenItsTetherCloses() async throws {
        let daemon = try await DBusDaemon.start()
        let pid = try #require(daemon.daemonProcessID, "the wrapper has a dbus-daemon child")
        #expect(kill(pid, 0) == 0, "the daemon runs")
        let connection = try await daemon.connect()
        connection.close()

        let endedByTheTether = await daemon.stop()

        #expect(kill(pid, 0) == -1 && errno == ESRCH, "dbus-daemon \(pid) still runs after its tether closed")
        #expect(endedByTheTether, "stop() had to signal the wrapper: the tether's end did not end it")
    }
}
