@testable import DBus
import Testing

/// Signals and match rules on a private dbus-daemon.
@Suite("D-Bus: signals and match rules (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage), .privateBus(),
       .timeLimit(.minutes(1)))
struct DBusSignalTests {
    static let interface = "org.example.Signals"

    /// The bus's count of `connection`'s match rules (org.freedesktop.DBus.Debug.Stats).
    func matchRules(of connection: DBusConnection, askedBy asker: DBusConnection) async throws -> Int {
        let stats = try await asker.call(destination: DBusConnection.busName, path: .bus, interface: "org.freedesktop.DBus.Debug.Stats",
                                         member: "GetConnectionStats", arguments: [.string(connection.uniqueName ?? "")])
        return try #require(stats.first?["MatchRules"]?.integerValue)
    }

    @Test func aStreamGetsTheSignalsItsRuleMatchesAndNoOthers() async throws {
        let daemon = try suiteDaemon()
        let emitter = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            emitter.close()
            listener.close()
        }
        let path = try DBusObjectPath("/org/example/emitter")
        let stream = try await listener.signals(matching: DBusMatchRule(sender: emitter.uniqueName, interface: Self.interface, member: "Fired"))
        var signals = stream.makeAsyncIterator()
        // Another member, and another interface: neither matches; the bus does not even send them.
        try emitter.emitSignal(path: path, interface: Self.interface, member: "Other", arguments: ["no"])
        try emitter.emitSignal(path: path, interface: "org.example.Elsewhere", member: "Fired", arguments: ["no"])
        try emitter.emitSignal(path: path, interface: Self.interface, member: "Fired", arguments: ["yes", .uint32(7)])
        let signal = try await next(&signals)
        #expect(signal.member == "Fired")
        #expect(signal.interface == Self.interface)
        #expect(signal.path == path)
        #expect(signal.sender == emitter.uniqueName)
        #expect(signal.body == ["yes", .uint32(7)])
    }

    @Test func argumentAndPathNamespaceRulesAreAppliedByTheBusAndLocally() async throws {
        let daemon = try suiteDaemon()
        let emitter = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            emitter.close()
            listener.close()
        }
        let rule = DBusMatchRule(sender: emitter.uniqueName, interface: Self.interface, pathNamespace: try DBusObjectPath("/org/example/ns"),
                                 arguments: [0: "it's"])
        // Two streams with different rules on one connection: each keeps its own signals.
        var matching = try await listener.signals(matching: rule).makeAsyncIterator()
        var everything = try await listener.signals(matching: DBusMatchRule(sender: emitter.uniqueName, interface: Self.interface))
            .makeAsyncIterator()
        try emitter.emitSignal(path: try DBusObjectPath("/org/example/nsx"), interface: Self.interface, member: "A", arguments: ["it's"])
        try emitter.emitSignal(path: try DBusObjectPath("/org/example/ns/child"), interface: Self.interface, member: "B", arguments: ["its"])
        try emitter.emitSignal(path: try DBusObjectPath("/org/example/ns/child"), interface: Self.interface, member: "C", arguments: ["it's"])
        #expect(try await next(&matching).member == "C")
        #expect(try await next(&everything).member == "A")
        #expect(try await next(&everything).member == "B")
        #expect(try await next(&everything).member == "C")
    }

    @Test func aWellKnownSenderIsFollowedToWhoeverOwnsIt() async throws {
        let daemon = try suiteDaemon()
        let owner = try await daemon.connect()
        let impostor = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            owner.close()
            impostor.close()
            listener.close()
        }
        // An interface of this test's own: the suite's other tests emit on the same bus.
        let interface = "org.example.Followed"
        try await owner.requestName("org.example.Emitter")
        var signals = try await listener.signals(matching: DBusMatchRule(sender: "org.example.Emitter", interface: interface))
            .makeAsyncIterator()
        // Every signal of the interface, whoever sends it: the bus delivers the impostor's too
        // (this rule matches it), and the listener receives them in the order the bus sent them.
        var anyone = try await listener.signals(matching: DBusMatchRule(interface: interface)).makeAsyncIterator()
        let path = try DBusObjectPath("/e")
        // Signals of two connections have no order between them: each waits until seen.
        try impostor.emitSignal(path: path, interface: interface, member: "Fired", arguments: ["impostor"])
        #expect(try await next(&anyone).body == ["impostor"])
        try owner.emitSignal(path: path, interface: interface, member: "Fired", arguments: ["owner"])
        #expect(try await next(&anyone).body == ["owner"])
        // The stream following the name dropped the impostor's signal, which came first.
        #expect(try await next(&signals).body == ["owner"])
        // The name changes hands: the new owner's signals are the stream's now.
        try await owner.releaseName("org.example.Emitter")
        try await impostor.requestName("org.example.Emitter")
        try owner.emitSignal(path: path, interface: interface, member: "Fired", arguments: ["old owner"])
        #expect(try await next(&anyone).body == ["old owner"])
        try impostor.emitSignal(path: path, interface: interface, member: "Fired", arguments: ["new owner"])
        #expect(try await next(&signals).body == ["new owner"])
    }

    @Test func streamsThatFollowOneNameTogetherAllSeeItsOwner() async throws {
        let daemon = try suiteDaemon()
        let owner = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            owner.close()
            listener.close()
        }
        try await owner.requestName("org.example.Shared")
        let rule = DBusMatchRule(sender: "org.example.Shared", interface: Self.interface)
        async let first = listener.signals(matching: rule)
        async let second = listener.signals(matching: rule)
        async let third = listener.signals(matching: rule)
        var iterators = try await [first, second, third].map { $0.makeAsyncIterator() }
        try owner.emitSignal(path: .root, interface: Self.interface, member: "Fired", arguments: ["shared"])
        for index in iterators.indices {
            #expect(try await next(&iterators[index]).body == ["shared"])
        }
        // The name's NameOwnerChanged rule is on the bus once, with the three streams' own.
        #expect(listener.core.state.withLock { $0.followedNames["org.example.Shared"]?.subscribers } == 3)
    }

    @Test func theRuleLeavesTheBusWhenTheConsumerStops() async throws {
        let daemon = try suiteDaemon()
        let emitter = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            emitter.close()
            listener.close()
        }
        let before = try await matchRules(of: listener, askedBy: emitter)
        let consumer = Task {
            let stream = try await listener.signals(matching: DBusMatchRule(sender: "org.example.Nobody", interface: Self.interface))
            for try await _ in stream {}
        }
        try await waitUntil("the stream's rules are on the bus") { try await matchRules(of: listener, askedBy: emitter) == before + 2 }
        #expect(listener.core.subscriptionCount == 1)
        consumer.cancel()
        _ = await consumer.result
        #expect(listener.core.subscriptionCount == 0)
        // RemoveMatch was sent as the stream ended; a call after it is answered after it.
        #expect(try await matchRules(of: listener, askedBy: listener) == before)
    }

    @Test func theStandardSignalsDecode() async throws {
        let daemon = try suiteDaemon()
        let emitter = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            emitter.close()
            listener.close()
        }
        let sender = try #require(emitter.uniqueName)
        let device = try DBusObjectPath("/org/bluez/hci0/dev_00")
        var added = try await listener.interfacesAdded(sender: sender).makeAsyncIterator()
        var removed = try await listener.interfacesRemoved(sender: sender).makeAsyncIterator()
        var changed = try await listener.propertiesChanged(sender: sender, pathNamespace: try DBusObjectPath("/org/bluez"), interface: "org.bluez.Device1")
            .makeAsyncIterator()
        var owners = try await listener.nameOwnerChanges("org.example.Comes").makeAsyncIterator()
        // A malformed InterfacesAdded is skipped, not delivered.
        try emitter.emitSignal(path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded", arguments: ["bad"])
        try emitter.emitSignal(path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded", arguments: [
            .objectPath(device), DBusValue(["org.bluez.Device1": ["RSSI": DBusValue.int16(-50)]]),
        ])
        try emitter.emitSignal(path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesRemoved", arguments: [
            .objectPath(device), DBusValue(["org.bluez.Device1"]),
        ])
        try emitter.emitPropertiesChanged(path: device, interface: "org.bluez.Adapter1", changed: ["Powered": true])
        try emitter.emitPropertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": true], invalidated: ["RSSI"])
        let interfacesAdded = try await next(&added)
        #expect(interfacesAdded.path == device)
        #expect(interfacesAdded.manager == .root)
        #expect(interfacesAdded.interfaces["org.bluez.Device1"]?["RSSI"] == .int16(-50))
        let interfacesRemoved = try await next(&removed)
        #expect(interfacesRemoved.path == device)
        #expect(interfacesRemoved.interfaces == ["org.bluez.Device1"])
        #expect(interfacesRemoved.sender == sender)
        let propertiesChanged = try await next(&changed)
        #expect(propertiesChanged.interface == "org.bluez.Device1")
        #expect(propertiesChanged.changed == ["Connected": true])
        #expect(propertiesChanged.invalidated == ["RSSI"])
        try await emitter.requestName("org.example.Comes")
        let change = try await next(&owners)
        #expect(change.name == "org.example.Comes")
        #expect(change.oldOwner == "")
        #expect(change.newOwner == sender)
    }

    @Test func aSlowConsumerLosesTheOldestSignalsNotMemory() async throws {
        let daemon = try suiteDaemon()
        let emitter = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            emitter.close()
            listener.close()
        }
        let stream = try await listener.signals(matching: DBusMatchRule(sender: emitter.uniqueName, interface: Self.interface), bufferLimit: 4)
        for index in 0..<10 {
            try emitter.emitSignal(path: .root, interface: Self.interface, member: "Fired", arguments: [.uint32(UInt32(index))])
        }
        // A call answered after the signals were delivered: they are all in the stream's buffer now.
        try emitter.emitSignal(path: .root, interface: Self.interface, member: "Last")
        _ = try await listener.listNames()
        var signals = stream.makeAsyncIterator()
        var received: [DBusMessage] = []
        while received.last?.member != "Last" { received.append(try await next(&signals)) }
        #expect(received.count == 4)
        #expect(received.dropLast().map { $0.body.first?.uint32Value } == [7, 8, 9])
    }

    @Test func closingTheConnectionEndsItsStreamsWithConnectionClosed() async throws {
        let daemon = try suiteDaemon()
        let listener = try await daemon.connect()
        // A rule nothing else in the suite matches, so the stream has nothing buffered.
        var signals = try await listener.signals(matching: DBusMatchRule(interface: "org.example.Closing")).makeAsyncIterator()
        listener.close()
        await #expect {
            _ = try await signals.next()
        } throws: { error in
            guard case let DBusError.connectionClosed(reason) = error else { return false }
            return reason == "closed by this process"
        }
    }
}
