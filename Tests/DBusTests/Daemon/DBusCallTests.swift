import BluetoothCore
@testable import DBus
import Testing

/// Calls between two of our connections through a private dbus-daemon: one exports
/// ``TestService``, the other calls it.
@Suite("D-Bus: calls between connections (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage), .privateBus(),
       .timeLimit(.minutes(1)))
struct DBusCallTests {
    /// A server connection exporting the test service at `/org/example/test`, and a client.
    struct Pair {
        let server: DBusConnection
        let client: DBusConnection
        let gate: Gate
        let path: DBusObjectPath

        var object: DBusRemoteObject { client.object(server.uniqueName ?? "", at: path) }

        func close() {
            gate.releaseAll()
            client.close()
            server.close()
        }
    }

    func pair(server serverOptions: DBusConnection.Options = .init(), client clientOptions: DBusConnection.Options = .init()) async throws -> Pair {
        let daemon = try suiteDaemon()
        let server = try await daemon.connect(serverOptions)
        let client = try await daemon.connect(clientOptions)
        let gate = Gate()
        let path = try DBusObjectPath("/org/example/test")
        try await server.export([TestService.interface(gate: gate)], at: path)
        return Pair(server: server, client: client, gate: gate, path: path)
    }

    @Test func methodsAnswerWithTheirValues() async throws {
        let pair = try await pair()
        defer { pair.close() }
        #expect(try await pair.object.call(TestService.name, "Echo", ["héllo"]) == [.string("héllo")])
        #expect(try await pair.object.call(TestService.name, "Add", [.int32(40), .int32(2)]) == [.int32(42)])
        // Without an interface, the method is found by name.
        let reply = try await pair.client.call(destination: pair.server.uniqueName, path: pair.path, interface: nil, member: "Add",
                                               arguments: [.int32(1), .int32(1)])
        #expect(reply == [.int32(2)])
    }

    @Test func errorRepliesCarryTheirNameAndMessageBothWays() async throws {
        let pair = try await pair()
        defer { pair.close() }
        // An error the handler throws reaches the caller by name and message.
        await #expect(throws: DBusError.errorReply(name: "org.bluez.Error.Rejected", message: "declined")) {
            try await pair.object.call(TestService.name, "Fail", ["org.bluez.Error.Rejected", "declined"])
        }
        // Any other Swift error answers Failed; an invalid error name is replaced by Failed.
        await #expect(throws: DBusError.errorReply(name: .failed, message: "a Swift error")) {
            try await pair.object.call(TestService.name, "Crash")
        }
        await #expect(throws: DBusError.errorReply(name: .failed, message: "x")) {
            try await pair.object.call(TestService.name, "Fail", ["not an error name", "x"])
        }
        // A handler returning the wrong types answers Failed rather than a lying reply.
        await #expect(throws: DBusError.errorReply(name: .failed, message: "the method's handler returned values of the wrong types")) {
            try await pair.object.call(TestService.name, "WrongOutput")
        }
    }

    @Test func unknownObjectsInterfacesMethodsAndBadArgumentsAreTheStandardErrors() async throws {
        let pair = try await pair()
        defer { pair.close() }
        let elsewhere = pair.client.object(pair.server.uniqueName ?? "", at: try DBusObjectPath("/nowhere"))
        await #expect(throws: DBusError.errorReply(name: .unknownObject, message: "no object at /nowhere")) {
            try await elsewhere.call(TestService.name, "Echo", ["x"])
        }
        await #expect(throws: DBusError.errorReply(name: .unknownInterface, message: "no interface org.example.Other at /org/example/test")) {
            try await pair.object.call("org.example.Other", "Echo", ["x"])
        }
        await #expect(throws: DBusError.errorReply(name: .unknownMethod, message: "no method Nope in org.example.Test")) {
            try await pair.object.call(TestService.name, "Nope")
        }
        await #expect(throws: DBusError.errorReply(name: .invalidArgs, message: "expected arguments \"ii\", got \"s\"")) {
            try await pair.object.call(TestService.name, "Add", ["x"])
        }
        // Ping answers on any path.
        #expect(try await elsewhere.call("org.freedesktop.DBus.Peer", "Ping") == [])
    }

    @Test func aCallToANameNobodyOwnsIsServiceUnknownOrNameHasNoOwner() async throws {
        let pair = try await pair()
        defer { pair.close() }
        // The bus would start a program for the name, and has none.
        await #expect {
            try await pair.client.call(destination: "org.example.Nobody", path: .root, interface: TestService.name, member: "Echo", arguments: ["x"])
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error, name == .serviceUnknown else { return false }
            return "\(error)".contains("is the service (for BlueZ, bluetoothd) running?")
        }
        // Told not to start one, it says nobody owns the name.
        await #expect {
            try await pair.client.call(destination: "org.example.Nobody", path: .root, interface: TestService.name, member: "Echo",
                                       arguments: ["x"], flags: .noAutoStart)
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error else { return false }
            return name == .nameHasNoOwner
        }
    }

    @Test func aCallTimesOutOnItsClockAndALateAnswerIsIgnored() async throws {
        let clock = ManualClock()
        var options = DBusConnection.Options()
        options.clock = BluetoothClock.manual(clock)
        let pair = try await pair(client: options)
        defer { pair.close() }
        let object = pair.object
        let call = Task { try await object.call(TestService.name, "Hang", timeout: .seconds(5)) }
        try await waitUntil("the handler waits") { pair.gate.waitingCount == 1 }
        try await clock.waitForSleepingTasks(1)
        clock.advance(by: .seconds(4))
        #expect(pair.gate.waitingCount == 1)
        clock.advance(by: .seconds(1))
        await #expect {
            try await call.value
        } throws: { error in
            guard case let DBusError.timedOut(what, after) = error else { return false }
            return after == .seconds(5) && what.contains("org.example.Test.Hang")
        }
        #expect(pair.client.core.state.withLock { $0.pending.isEmpty })
        // The answer that comes after the timeout is dropped, and the connection goes on.
        pair.gate.releaseAll()
        #expect(try await object.call(TestService.name, "Echo", ["after"]) == ["after"])
    }

    @Test func cancellingTheCallerEndsTheCallAtOnce() async throws {
        let pair = try await pair()
        defer { pair.close() }
        let object = pair.object
        let call = Task { try await object.call(TestService.name, "Hang") }
        try await waitUntil("the handler waits") { pair.gate.waitingCount == 1 }
        call.cancel()
        await #expect(throws: DBusError.cancelled) { try await call.value }
        #expect(pair.client.core.state.withLock { $0.pending.isEmpty })
    }

    @Test func callsToAnExportedObjectAreBoundedAndTheRestRefused() async throws {
        var options = DBusConnection.Options()
        options.maximumConcurrentIncomingCalls = 2
        let pair = try await pair(server: options)
        defer { pair.close() }
        let object = pair.object
        let first = Task { try await object.call(TestService.name, "Hang") }
        let second = Task { try await object.call(TestService.name, "Hang") }
        try await waitUntil("two handlers wait") { pair.gate.waitingCount == 2 }
        await #expect {
            try await object.call(TestService.name, "Echo", ["x"])
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error else { return false }
            return name == .limitsExceeded
        }
        pair.gate.releaseAll()
        #expect(try await first.value == [])
        #expect(try await second.value == [])
        #expect(try await object.call(TestService.name, "Echo", ["x"]) == ["x"])
    }

    @Test func closingTheServerCancelsItsHandlersAndTheCallerHearsNoReply() async throws {
        let pair = try await pair()
        defer { pair.close() }
        let object = pair.object
        let call = Task { try await object.call(TestService.name, "Hang") }
        try await waitUntil("the handler waits") { pair.gate.waitingCount == 1 }
        pair.server.close()
        // The bus answers for a peer that left without answering.
        await #expect {
            try await call.value
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error else { return false }
            return name == .noReply
        }
        try await waitUntil("the handler was cancelled") { pair.gate.cancelledCount == 1 }
        // And the closed connection refuses work with a typed error.
        await #expect {
            try await pair.server.listNames()
        } throws: { error in
            guard case DBusError.connectionClosed = error else { return false }
            return true
        }
    }
}
