@testable import DBus
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

    @Test func requestNameGetNameOwnerAndReleaseName() async throws {
        let daemon = try suiteDaemon()
        let first = try await daemon.connect()
        let second = try await daemon.connect()
        defer {
            first.close()
            second.close()
        }
        #expect(try await first.nameOwner("org.example.Owned") == nil)
        #expect(try await first.requestName("org.example.Owned") == .primaryOwner)
        #expect(try await first.requestName("org.example.Owned") == .alreadyOwner)
        #expect(try await second.nameOwner("org.example.Owned") == first.uniqueName)
        #expect(try await second.requestName("org.example.Owned") == .exists)
        #expect(try await second.requestName("org.example.Owned", flags: []) == .inQueue)
        #expect(try await second.listNames().contains("org.example.Owned"))
        #expect(try await first.releaseName("org.example.Owned"))
        // The queued connection gets the name.
        #expect(try await first.nameOwner("org.example.Owned") == second.uniqueName)
        #expect(try await first.releaseName("org.example.Owned") == false)
    }

    @Test func aNameThePolicyForbidsIsAccessDeniedWithAdvice() async throws {
        let daemon = try suiteDaemon()
        let connection = try await daemon.connect()
        defer { connection.close() }
        await #expect {
            try await connection.requestName("org.example.Forbidden")
        } throws: { error in
            guard case let DBusError.errorReply(name, message) = error, name == .accessDenied else { return false }
            return message.contains("org.example.Forbidden") && "\(error)".contains("/etc/dbus-1/system.d/")
        }
    }

    @Test func connectsToTheAbstractAddressAndToTheWholePrintedList() async throws {
        let daemon = try suiteDaemon()
        let abstract = try #require(daemon.abstractAddress)
        let viaAbstract = try await DBusConnection.connect(to: abstract)
        defer { viaAbstract.close() }
        #expect(viaAbstract.uniqueName != nil)
        // The printed list names both sockets, each with its GUID; the first one is used.
        let viaList = try await DBusConnection.connect(to: daemon.address)
        defer { viaList.close() }
        let guid = try #require(DBusAddress.parse(daemon.address).first?.guid)
        #expect(viaList.serverGUID == guid)
    }

    @Test func aGUIDThatIsNotTheServersIsRefused() async throws {
        let daemon = try suiteDaemon()
        var address = try #require(try DBusAddress.parse(daemon.pathAddress).first)
        address.options = address.options.map { $0.key == "guid" ? ($0.key, String(repeating: "0", count: 32)) : $0 }
        await #expect {
            try await DBusConnection.connect(to: [address])
        } throws: { error in
            guard case let DBusError.authenticationFailed(reason) = error else { return false }
            return reason.contains("GUID")
        }
    }

    @Test func aMissingSocketIsAConnectErrorWithAHint() async throws {
        await #expect {
            try await DBusConnection.connect(to: "unix:path=/nonexistent/bluejay-test-bus")
        } throws: { error in
            guard case let DBusError.connectFailed(_, code, hint) = error else { return false }
            return code == ENOENT && hint.contains("is the bus")
        }
    }
}
