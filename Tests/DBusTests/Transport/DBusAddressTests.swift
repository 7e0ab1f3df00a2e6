@testable import DBus
import Testing

/// Server addresses (D-Bus Specification, "Server Addresses").
@Suite("D-Bus addresses")
struct DBusAddressTests {
    @Test func aListOfAddressesParsesInOrderWithEscapesUndone() throws {
        let addresses = try DBusAddress.parse("unix:abstract=/tmp/dbus-X,guid=0123;unix:path=/run/user/1000/my%20bus;tcp:host=localhost,port=1")
        #expect(addresses.count == 3)
        #expect(addresses[0].transport == "unix")
        #expect(addresses[0]["abstract"] == "/tmp/dbus-X")
        #expect(addresses[0].guid == "0123")
        #expect(addresses[1]["path"] == "/run/user/1000/my bus")
        #expect(addresses[1].guid == nil)
        #expect(addresses[2].transport == "tcp")
        #expect(addresses[1].description == "unix:path=/run/user/1000/my%20bus")
        #expect(try DBusAddress.parse(addresses[1].description) == [addresses[1]])
    }

    @Test func whereAClientCanConnect() throws {
        #expect(try DBusAddress.parse("unix:path=/run/dbus/system_bus_socket")[0].endpoint() == .success(.unixPath("/run/dbus/system_bus_socket")))
        #expect(try DBusAddress.parse("unix:abstract=name")[0].endpoint() == .success(.unixAbstract("name")))
        for listenOnly in ["unix:tmpdir=/tmp", "unix:dir=/tmp", "unix:runtime=yes"] {
            guard case let .failure(.unsupported(reason)) = try DBusAddress.parse(listenOnly)[0].endpoint() else {
                Issue.record("\(listenOnly) should be unsupported for a client")
                continue
            }
            #expect(reason.contains("listen"))
        }
        guard case .failure(.unsupported) = try DBusAddress.parse("tcp:host=localhost,port=1")[0].endpoint() else {
            Issue.record("tcp: should be unsupported")
            return
        }
        guard case .failure(.invalidAddress) = try DBusAddress.parse("unix:path=/a,abstract=b")[0].endpoint() else {
            Issue.record("path and abstract together should be invalid")
            return
        }
    }

    @Test("malformed addresses are typed errors", arguments: ["", ";", "unix", ":path=/x", "unix:path", "unix:=x", "unix:path=/x,path=/y",
                                                              "unix:path=%zz", "unix:path=%4"])
    func malformed(_ text: String) {
        #expect(throws: DBusError.self) { try DBusAddress.parse(text) }
    }

    @Test func aListOfOnlyUnusableAddressesSaysWhyForEach() async throws {
        await #expect {
            try await DBusConnection.connect(to: "unix:tmpdir=/tmp;tcp:host=localhost,port=1")
        } throws: { error in
            guard case let DBusError.invalidAddress(_, reason) = error else { return false }
            return reason.contains("tmpdir") && reason.contains("tcp")
        }
    }
}
