@testable import DBus
import Synchronization
import Testing

/// An exported object tree as BlueZ reads a GATT application: an ObjectManager at the root,
/// objects with properties below it; Introspect, Properties and GetManagedObjects answered by
/// the connection, InterfacesAdded/Removed and PropertiesChanged emitted.
@Suite("D-Bus: exported objects (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage), .privateBus(),
       .timeLimit(.minutes(1)))
struct DBusExportTests {
    /// A characteristic-like object: a read-write `Value`, a constant `UUID`, a write-only `Secret`.
    final class Characteristic: Sendable {
        let value = Mutex<[UInt8]>([1, 2, 3])
        let secret = Mutex<String>("")

        func interface() -> DBusInterface {
            DBusInterface("org.bluez.GattCharacteristic1", methods: [
                DBusMethod("ReadValue", inputs: [.init("options", .array(.dictEntry(key: .string, value: .variant)))],
                           outputs: [.init("value", .array(.byte))]) { [self] _ in [.bytes(value.withLock { $0 })] },
            ], properties: [
                .constant("UUID", "00002a37-0000-1000-8000-00805f9b34fb"),
                DBusProperty("Value", type: .array(.byte), get: { [self] in .bytes(value.withLock { $0 }) }, set: { [self] new in
                    value.withLock { $0 = new.bytesValue ?? [] }
                }),
                DBusProperty("Secret", type: .string, get: nil, set: { [self] new in secret.withLock { $0 = new.stringValue ?? "" } }),
            ], signals: [])
        }
    }

    @Test func getManagedObjectsListsTheTreeWithPropertiesAndChangesAreAnnounced() async throws {
        let daemon = try suiteDaemon()
        let app = try await daemon.connect()
        let reader = try await daemon.connect()
        defer {
            app.close()
            reader.close()
        }
        let sender = try #require(app.uniqueName)
        let root = try DBusObjectPath("/org/example/app")
        let service = try root.appending("service0")
        let characteristic = try service.appending("char0")
        try app.addObjectManager(at: root)
        var added = try await reader.interfacesAdded(sender: sender, manager: root).makeAsyncIterator()
        var removed = try await reader.interfacesRemoved(sender: sender, manager: root).makeAsyncIterator()
        try await app.export([DBusInterface("org.bluez.GattService1", properties: [.constant("Primary", true)])], at: service)
        try await app.export([Characteristic().interface()], at: characteristic)

        let first = try await next(&added)
        #expect(first.path == service)
        #expect(first.interfaces == ["org.bluez.GattService1": ["Primary": true]])
        let second = try await next(&added)
        #expect(second.path == characteristic)
        #expect(second.interfaces["org.bluez.GattCharacteristic1"]?["Value"] == .bytes([1, 2, 3]))
        // The write-only property is not read.
        #expect(second.interfaces["org.bluez.GattCharacteristic1"]?["Secret"] == nil)

        let objects = try await reader.managedObjects(of: sender, at: root)
        #expect(objects.keys.sorted() == [service, characteristic])
        #expect(objects[service] == ["org.bluez.GattService1": ["Primary": true]])
        #expect(objects[characteristic]?["org.bluez.GattCharacteristic1"]?["UUID"] == "00002a37-0000-1000-8000-00805f9b34fb")

        try app.unexport(characteristic)
        let gone = try await next(&removed)
        #expect(gone.path == characteristic)
        #expect(gone.interfaces == ["org.bluez.GattCharacteristic1"])
        #expect(try await reader.managedObjects(of: sender, at: root).keys.sorted() == [service])
        // GetManagedObjects is only answered where an object manager is.
        await #expect {
            try await reader.managedObjects(of: sender, at: service)
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error else { return false }
            return name == .unknownInterface
        }
    }

    @Test func propertiesGetGetAllAndSetFollowTheStandardInterface() async throws {
        let daemon = try suiteDaemon()
        let app = try await daemon.connect()
        let reader = try await daemon.connect()
        defer {
            app.close()
            reader.close()
        }
        let path = try DBusObjectPath("/c")
        let characteristic = Characteristic()
        try await app.export([characteristic.interface()], at: path)
        let object = reader.object(try #require(app.uniqueName), at: path)
        let interface = "org.bluez.GattCharacteristic1"
        #expect(try await object.property("Value", interface: interface) == .bytes([1, 2, 3]))
        let all = try await object.properties(interface: interface)
        #expect(all == ["UUID": "00002a37-0000-1000-8000-00805f9b34fb", "Value": .bytes([1, 2, 3])])

        var changes = try await object.propertiesChanged(interface: interface).makeAsyncIterator()
        try await object.setProperty("Value", to: .bytes([9]), interface: interface)
        #expect(characteristic.value.withLock { $0 } == [9])
        let change = try await next(&changes)
        #expect(change.changed == ["Value": .bytes([9])])
        #expect(change.invalidated.isEmpty)
        try await object.setProperty("Secret", to: "s3", interface: interface)
        #expect(characteristic.secret.withLock { $0 } == "s3")
        #expect(try await next(&changes).invalidated == ["Secret"])

        func errorName(_ body: () async throws -> Void) async -> DBusErrorName? {
            do {
                try await body()
                return nil
            } catch let DBusError.errorReply(name, _) {
                return name
            } catch {
                return nil
            }
        }
        #expect(await errorName { _ = try await object.property("Nope", interface: interface) } == .unknownProperty)
        #expect(await errorName { _ = try await object.property("Value", interface: "org.example.None") } == .unknownInterface)
        #expect(await errorName { _ = try await object.property("Secret", interface: interface) } == .invalidArgs)
        #expect(await errorName { try await object.setProperty("UUID", to: "x", interface: interface) } == .propertyReadOnly)
        #expect(await errorName { try await object.setProperty("Value", to: "not bytes", interface: interface) } == .invalidArgs)
        #expect(await errorName { _ = try await object.properties(interface: "org.example.None") } == .unknownInterface)
        #expect(characteristic.value.withLock { $0 } == [9])
    }

    @Test func introspectionDescribesTheObjectAndLeadsToItsChildren() async throws {
        let daemon = try suiteDaemon()
        let app = try await daemon.connect()
        let reader = try await daemon.connect()
        defer {
            app.close()
            reader.close()
        }
        let sender = try #require(app.uniqueName)
        try app.addObjectManager(at: try DBusObjectPath("/org/example/app"))
        try await app.export([Characteristic().interface(), TestService.interface()], at: try DBusObjectPath("/org/example/app/char0"))

        let root = try await reader.introspect(sender, at: .root)
        #expect(root.contains("<node name=\"org\"/>"))
        #expect(!root.contains("org.freedesktop.DBus.Properties"))
        let app1 = try await reader.introspect(sender, at: try DBusObjectPath("/org/example/app"))
        #expect(app1.contains("<interface name=\"org.freedesktop.DBus.ObjectManager\">"))
        #expect(app1.contains("<node name=\"char0\"/>"))
        let leaf = try await reader.introspect(sender, at: try DBusObjectPath("/org/example/app/char0"))
        #expect(leaf.hasPrefix("<!DOCTYPE node PUBLIC"))
        #expect(leaf.contains("<interface name=\"org.bluez.GattCharacteristic1\">"))
        #expect(leaf.contains("<arg name=\"options\" type=\"a{sv}\" direction=\"in\"/>"))
        #expect(leaf.contains("<property name=\"Value\" type=\"ay\" access=\"readwrite\"/>"))
        #expect(leaf.contains("<property name=\"Secret\" type=\"s\" access=\"write\"/>"))
        #expect(leaf.contains("<signal name=\"Fired\">"))
        await #expect {
            try await reader.introspect(sender, at: try DBusObjectPath("/elsewhere"))
        } throws: { error in
            guard case let DBusError.errorReply(name, _) = error else { return false }
            return name == .unknownObject
        }
    }

    @Test func exportingIsCheckedBeforeAnythingIsAnswered() async throws {
        let daemon = try suiteDaemon()
        let app = try await daemon.connect()
        defer { app.close() }
        let path = try DBusObjectPath("/x")
        try await app.export([TestService.interface()], at: path)
        await #expect(throws: DBusError.invalidArgument("an object is already exported at /x")) {
            try await app.export([TestService.interface()], at: path)
        }
        await #expect(throws: DBusError.self) { try await app.export([DBusInterface("not.valid-name")], at: try DBusObjectPath("/y")) }
        await #expect(throws: DBusError.self) {
            try await app.export([DBusInterface("org.freedesktop.DBus.Properties")], at: try DBusObjectPath("/z"))
        }
        #expect(throws: DBusError.invalidArgument("no object is exported at /y")) { try app.unexport(try DBusObjectPath("/y")) }
    }

    /// BlueZ sends a GATT application's writes without response as calls that want no reply,
    /// back to back; they are handled in the order sent, even when an earlier one takes longer.
    /// Calls that want a reply still run side by side (a slow one does not hold a `Cancel`).
    @Test func callsWithoutReplyFromOneSenderToOneObjectAreHandledInOrder() async throws {
        let daemon = try suiteDaemon()
        let app = try await daemon.connect()
        let caller = try await daemon.connect()
        defer {
            app.close()
            caller.close()
        }
        let destination = try #require(app.uniqueName)
        let handled = Mutex<[UInt32]>([])
        let gate = Gate()
        let path = try DBusObjectPath("/org/example/app/char0")
        try await app.export([DBusInterface("org.bluez.GattCharacteristic1", methods: [
            DBusMethod("WriteValue", inputs: [.init("value", .uint32)]) { call in
                let index = call.arguments.first?.uint32Value ?? 0
                // The first write is slow: the others must wait for it, not pass it. (Without the
                // order, they pass it in every run: each runs in a task of its own.)
                if index == 0 { try? await Task.sleep(for: .milliseconds(50)) }
                handled.withLock { $0.append(index) }
                return []
            },
            DBusMethod("Hold") { _ in
                await gate.wait()
                return []
            },
            DBusMethod("Release") { _ in
                gate.open()
                return []
            },
        ])], at: path)
        for index in 0..<20 as Range<UInt32> {
            _ = try caller.send(.methodCall(destination: destination, path: path, interface: "org.bluez.GattCharacteristic1",
                                            member: "WriteValue", body: [.uint32(index)], flags: .noReplyExpected))
        }
        // A hang guard, not a speed limit: a loaded full run shares two cores with hundreds of tests.
        try await waitUntil("twenty writes handled", timeout: .seconds(50)) { handled.withLock { $0.count } == 20 }
        #expect(handled.withLock { $0 } == Array(0..<20))

        // Calls that want replies are not queued behind each other.
        async let held: [DBusValue] = caller.call(destination: destination, path: path, interface: "org.bluez.GattCharacteristic1", member: "Hold")
        _ = try await caller.call(destination: destination, path: path, interface: "org.bluez.GattCharacteristic1", member: "Release")
        _ = try await held
    }

    /// Holds callers until opened.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state -> Bool in
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.resume() }
        }
    }
}
