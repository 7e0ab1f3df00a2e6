import DBus
import Testing

/// Calls to the bus itself (org.freedesktop.DBus) on a private dbus-daemon.
@Suite("D-Bus: the bus's own methods (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage), .privateBus(),
       .timeLimit(.minutes(1)))
struct DBusBusTests {
    @Test func helloGivesAUniqueNameThatListNamesShows() async throws {
        let daemon = try suiteDaemon()
        let connection = try await daemon.connect()
        defer { connection.close() }
        let name = try #require(connection.uniqueName)
        #expect(name.hasPrefix(":1."))
        #expect(connection.serverGUID.count == 32)
        #expect(connection.canPassFileDescriptors)
        let names = try await connection.listNames()
        #expect(names.contains(name))
        #expect(names.contains("org.freedesktop.DBus"))
    }
}
