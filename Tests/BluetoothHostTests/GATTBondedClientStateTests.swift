import BluetoothCore
@testable import BluetoothHost
import Foundation
import Synchronization
import Testing

/// What the server keeps of a bonded client between its connections (Core 6.0, Vol 3, Part G,
/// 3.3.3.3 and 2.5.2.1): its Client Characteristic Configurations, restored once its link is
/// encrypted with its bond's key and to nobody else; what it missed while away.
@Suite("GATT server: bonded clients' subscriptions", .timeLimit(.minutes(1)))
struct GATTBondedClientStateTests {
    static let bonded = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_01), type: .random)
    static let other = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_02), type: .random)
    /// A link encrypted with the key of the bond with ``bonded``.
    static let bondedLink = LinkSecurity(isEncrypted: true, isSecureConnections: true, keySize: 16, bondIdentity: bonded)

    static let service = BluetoothUUID("6E400A01-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Notifies; no notification on reconnection.
    static let plain = BluetoothUUID("6E400A02-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Notifies its latest value to bonded subscribers on their return.
    static let latest = BluetoothUUID("6E400A03-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Indicates.
    static let indicated = BluetoothUUID("6E400A04-B5A3-F393-E0A9-E50E24DCCA9E")

    static var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: plain, properties: [.read, .notify], value: [0]),
            GATTCharacteristicDefinition(uuid: latest, properties: [.read, .notify], notifiesLatestValueOnReconnection: true, value: [0]),
            GATTCharacteristicDefinition(uuid: indicated, properties: [.read, .indicate], value: [0]),
        ])
    }

    /// The handles of the published test service.
    struct Handles {
        let plain: UInt16
        let latest: UInt16
        let indicated: UInt16
    }

    static func publish(on server: GATTServer) async throws -> Handles {
        let published = try await server.addService(definition)
        return Handles(plain: try #require(published.characteristic(plain)).valueHandle,
                       latest: try #require(published.characteristic(latest)).valueHandle,
                       indicated: try #require(published.characteristic(indicated)).valueHandle)
    }

    /// A client on `handle` that talked once (Exchange MTU), so the server knows it.
    static func client(_ harness: ServerHarness, handle: UInt16, peer: DeviceAddress = bonded) async throws -> RawBearer {
        let raw = harness.rawBearer(handle: handle, peer: peer)
        try await raw.exchangeMTU(100)
        return raw
    }

    /// Writes the CCCD of the value at `valueHandle` (the descriptor follows the value).
    static func subscribe(_ raw: RawBearer, _ valueHandle: UInt16, _ configuration: ClientCharacteristicConfiguration) async throws {
        #expect(try await raw.request(.writeRequest(.init(handle: valueHandle + 1, value: configuration.bytes))) == .writeResponse(.init()))
    }

    /// The values pushed to a client, in order, from what it recorded.
    static func pushes(_ raw: RawBearer) -> [(opcode: ATTOpcode, handle: UInt16, value: [UInt8])] {
        raw.recorder.all.compactMap { pdu in
            switch try? ATTPDU.decode(pdu) {
            case let .handleValueNotification(notification)?: return (.handleValueNotification, notification.handle, Array(notification.value))
            case let .handleValueIndication(indication)?: return (.handleValueIndication, indication.handle, Array(indication.value))
            default: return nil
            }
        }
    }

    /// A bonded client subscribes on an encrypted link, then leaves.
    static func subscribeAndLeave(_ harness: ServerHarness, configurations: [(UInt16, ClientCharacteristicConfiguration)],
                                  handle: UInt16 = 0x0041) async throws {
        let raw = try await client(harness, handle: handle)
        harness.server.setSecurity(bondedLink, connectionHandle: handle)
        for (valueHandle, configuration) in configurations { try await subscribe(raw, valueHandle, configuration) }
        harness.disconnect(handle: handle)
        #expect(await eventually { await !harness.server.connectionHandles.contains(handle) })
    }

    @Test("A bonded client's subscriptions come back once its next link is encrypted with its bond's key, not before, with no CCCD write")
    func restoredOnEncryption() async throws {
        let harness = await ServerHarness()
        let handles = try await Self.publish(on: harness.server)
        let events = await harness.server.events()
        try await Self.subscribeAndLeave(harness, configurations: [(handles.plain, .notification), (handles.indicated, .indication)])

        // Back, not yet encrypted: nobody is subscribed, the CCCD reads 0, nothing is pushed.
        let back = try await Self.client(harness, handle: 0x0042)
        #expect(try await back.request(.readRequest(.init(handle: handles.plain + 1))) == .readResponse(.init(value: [0, 0])))
        #expect(await harness.server.subscriptions(forHandle: handles.plain).isEmpty)
        #expect(try await harness.server.updateValue([1], forHandle: handles.plain).notified.isEmpty)

        // Encrypted with the bond's key: subscribed again without writing anything.
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        #expect(await eventually { await harness.server.subscriptions(forHandle: handles.plain).map(\.connectionHandle) == [0x0042] })
        #expect(await harness.server.subscriptions(forHandle: handles.indicated).map(\.configuration) == [.indication])
        #expect(try await back.request(.readRequest(.init(handle: handles.plain + 1))) == .readResponse(.init(value: [1, 0])))
        #expect(try await harness.server.updateValue([2], forHandle: handles.plain).notified == [0x0042])
        #expect(await eventually { Self.pushes(back).map(\.value) == [[2]] })

        // The app heard both restored subscriptions as such, with the bond's identity.
        let restored = try await withTimeout("the restored subscription events", .seconds(10)) {
            var restored: [GATTSubscription] = []
            for await event in events {
                if case let .subscriptionChanged(subscription) = event, subscription.isRestored { restored.append(subscription) }
                if restored.count == 2 { break }
            }
            return restored
        }
        #expect(Set(restored.map(\.valueHandle)) == [handles.plain, handles.indicated])
        #expect(restored.allSatisfy { $0.connectionHandle == 0x0042 && $0.bondIdentity == Self.bonded })
    }

    /// A recording storage, as the host's bond store is: what was saved, by identity.
    final class Storage: Sendable {
        private let states = Mutex<[DeviceAddress: GATTBondedClientState]>([:])
        var saved: [DeviceAddress: GATTBondedClientState] { states.withLock { $0 } }
        var storage: GATTClientStateStorage {
            GATTClientStateStorage(load: { identity in self.states.withLock { $0[identity] } },
                                   save: { identity, state in self.states.withLock { $0[identity] = state } })
        }
    }

    @Test("The subscriptions are stored under the bond's identity as they are written, and come back after a restart")
    func restoredAfterARestart() async throws {
        let storage = Storage()
        let first = await ServerHarness()
        await first.server.setClientStateStorage(storage.storage)
        let handles = try await Self.publish(on: first.server)
        let raw = try await Self.client(first, handle: 0x0041)
        first.server.setSecurity(Self.bondedLink, connectionHandle: 0x0041)
        try await Self.subscribe(raw, handles.latest, .notification)
        // Stored while the link is up: a process killed now still has it.
        #expect(await eventually { storage.saved[Self.bonded]?.subscriptions.map(\.valueHandle) == [handles.latest] })
        #expect(storage.saved[Self.bonded]?.subscriptions.first?.characteristicUUID == Self.latest)

        // Another run, the same storage and database; the client comes back and encrypts.
        let second = await ServerHarness()
        await second.server.setClientStateStorage(storage.storage)
        let again = try await Self.publish(on: second.server)
        let back = try await Self.client(second, handle: 0x0050)
        second.server.setSecurity(Self.bondedLink, connectionHandle: 0x0050)
        #expect(await eventually { await second.server.subscriptions(forHandle: again.latest).map(\.connectionHandle) == [0x0050] })
        #expect(try await second.server.updateValue([7], forHandle: again.latest).notified == [0x0050])
        #expect(await eventually { Self.pushes(back).map(\.value) == [[7]] })
    }

    @Test("After a restart with another database, a stored subscription whose handle holds another characteristic is not restored")
    func notRestoredOntoAnotherCharacteristic() async throws {
        let storage = Storage()
        let first = await ServerHarness()
        await first.server.setClientStateStorage(storage.storage)
        let handles = try await Self.publish(on: first.server)
        try await Self.subscribeAndLeave(first, configurations: [(handles.plain, .notification)])
        #expect(await eventually { storage.saved[Self.bonded]?.subscriptions.isEmpty == false })

        // The next run publishes another service first: the old handle is another characteristic's.
        let second = await ServerHarness()
        await second.server.setClientStateStorage(storage.storage)
        let other = try await second.server.addService(GATTServiceDefinition(uuid: "FEE0", characteristics: [
            GATTCharacteristicDefinition(uuid: "FEE1", properties: [.read, .notify], value: [9]),
            GATTCharacteristicDefinition(uuid: "FEE2", properties: [.read, .notify], value: [9]),
        ]))
        #expect(other.characteristics.contains { $0.valueHandle == handles.plain }, "the test needs the old handle taken")
        let moved = try await Self.publish(on: second.server)
        let back = try await Self.client(second, handle: 0x0050)
        second.server.setSecurity(Self.bondedLink, connectionHandle: 0x0050)
        #expect(await eventually { await second.server.bondedClientState(of: Self.bonded) != nil })
        _ = try await back.request(.readRequest(.init(handle: moved.plain)))
        #expect(await second.server.subscriptions(forHandle: handles.plain).isEmpty)
        #expect(await second.server.subscriptions(forHandle: moved.plain).isEmpty)
    }

    /// The attack: a peer takes a bonded client's address but has not its keys. It never
    /// encrypts with the bond's key, so it is a new client: it gets no subscription, and what it
    /// writes does not become the bonded client's.
    @Test("A peer with a bonded client's address but not its keys gets no subscription and overwrites none")
    func impostorGetsNothing() async throws {
        let storage = Storage()
        let harness = await ServerHarness()
        await harness.server.setClientStateStorage(storage.storage)
        await harness.server.setKeyAvailability { $0 == Self.bonded }
        let handles = try await Self.publish(on: harness.server)
        try await Self.subscribeAndLeave(harness, configurations: [(handles.plain, .notification)])
        #expect(await eventually { storage.saved[Self.bonded]?.subscriptions.count == 1 })
        let stored = storage.saved[Self.bonded]

        let impostor = try await Self.client(harness, handle: 0x0042)
        #expect(try await impostor.request(.readRequest(.init(handle: handles.plain + 1))) == .readResponse(.init(value: [0, 0])))
        #expect(try await harness.server.updateValue([1], forHandle: handles.plain).notified.isEmpty)
        // It subscribes to something else and unsubscribes nothing of the bonded client's: its own link only.
        try await Self.subscribe(impostor, handles.indicated, .indication)
        try await Self.subscribe(impostor, handles.plain, [])
        // A link encrypted with another bond's key is another client.
        harness.server.setSecurity(LinkSecurity(isEncrypted: true, keySize: 16, bondIdentity: Self.other), connectionHandle: 0x0042)
        _ = try await impostor.request(.readRequest(.init(handle: handles.plain)))
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })
        #expect(storage.saved[Self.bonded] == stored, "the bonded client's state is as it left it")
        #expect(storage.saved[Self.other]?.subscriptions.map(\.valueHandle) == [handles.indicated],
                "what the link wrote went to the bond it encrypted with")

        // The real client comes back: its own subscription, not the impostor's.
        let real = try await Self.client(harness, handle: 0x0043)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0043)
        #expect(await eventually { await harness.server.subscriptions(forHandle: handles.plain).map(\.connectionHandle) == [0x0043] })
        #expect(await harness.server.subscriptions(forHandle: handles.indicated).isEmpty)
        _ = real
    }

    @Test("Forgetting the client (its bond removed) clears what was kept: its next link finds nothing")
    func clearedWhenTheBondGoes() async throws {
        let harness = await ServerHarness()
        let handles = try await Self.publish(on: harness.server)
        try await Self.subscribeAndLeave(harness, configurations: [(handles.plain, .notification), (handles.indicated, .indication)])
        #expect(try await harness.server.updateValue([5], forHandle: handles.indicated).deferred == [Self.bonded])
        await harness.server.forgetClient(Self.bonded)
        #expect(await harness.server.bondedClientState(of: Self.bonded) == nil)
        #expect(try await harness.server.updateValue([6], forHandle: handles.indicated).deferred.isEmpty)

        let back = try await Self.client(harness, handle: 0x0042)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        #expect(await eventually { await harness.server.bondedClientState(of: Self.bonded) != nil }, "the link took up a fresh state")
        _ = try await back.request(.readRequest(.init(handle: handles.plain)))
        #expect(await harness.server.subscriptions(forHandle: handles.plain).isEmpty)
        #expect(Self.pushes(back).isEmpty, "no indication kept for the forgotten client")
    }

    @Test("Indications of values updated while away are kept, at most the bound per client (oldest dropped, counted), and delivered in order on return")
    func deferredIndicationsBoundAndDelivery() async throws {
        var settings = GATTServerSettings()
        settings.maximumDeferredIndications = 4
        let harness = await ServerHarness(settings: settings)
        let handles = try await Self.publish(on: harness.server)
        try await Self.subscribeAndLeave(harness, configurations: [(handles.indicated, .indication)])

        for value: UInt8 in 1...10 {
            let update = try await harness.server.updateValue([value], forHandle: handles.indicated)
            #expect(update.deferred == [Self.bonded] && !update.hasSubscribers)
        }
        #expect(harness.server.droppedDeferredIndicationCount == 6)
        // Naming the connections leaves away clients out.
        #expect(try await harness.server.updateValue([11], forHandle: handles.indicated, connectionHandles: [0x0099]).deferred.isEmpty)

        let back = try await Self.client(harness, handle: 0x0042)
        #expect(Self.pushes(back).isEmpty, "nothing before the link is encrypted")
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        // One at a time, each after the confirmation of the one before (Vol 3, Part F, 3.4.7.2).
        var received: [[UInt8]] = []
        for _ in 0..<4 {
            let pdu = try #require(await back.recorder.next(matching: { $0.first == ATTOpcode.handleValueIndication.rawValue }))
            guard case let .handleValueIndication(indication) = try ATTPDU.decode(pdu) else { return }
            #expect(indication.handle == handles.indicated)
            received.append(Array(indication.value))
            back.send(.handleValueConfirmation(.init()))
        }
        #expect(received == [[7], [8], [9], [10]])
        #expect(try await harness.server.updateValue([12], forHandle: handles.indicated).deferred.isEmpty, "it is back: nothing deferred")

        // Handed over once: after another absence without updates, nothing comes again.
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })
        let again = try await Self.client(harness, handle: 0x0043)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0043)
        #expect(await eventually { await harness.server.subscriptions(forHandle: handles.indicated).map(\.connectionHandle) == [0x0043] })
        _ = try await again.request(.readRequest(.init(handle: handles.plain)))
        #expect(Self.pushes(again).isEmpty)
    }

    @Test("A notification on return only where the characteristic asks for it: its latest value, once")
    func notifyLatestOnReconnection() async throws {
        let harness = await ServerHarness()
        let handles = try await Self.publish(on: harness.server)
        try await Self.subscribeAndLeave(harness, configurations: [(handles.plain, .notification), (handles.latest, .notification)])
        #expect(try await harness.server.updateValue([1], forHandle: handles.plain).deferred.isEmpty, "no policy: nothing kept")
        for value: UInt8 in 1...3 {
            #expect(try await harness.server.updateValue([value], forHandle: handles.latest).deferred == [Self.bonded])
        }

        let back = try await Self.client(harness, handle: 0x0042)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        #expect(await eventually { Self.pushes(back).count == 1 })
        _ = try await back.request(.readRequest(.init(handle: handles.plain)))
        let pushes = Self.pushes(back)
        #expect(pushes.count == 1 && pushes.first?.opcode == .handleValueNotification)
        #expect(pushes.first?.handle == handles.latest && pushes.first?.value == [3])
    }

    @Test("A bonded client that enabled Service Changed and comes back after the database changed is indicated it first")
    func serviceChangedOnReturn() async throws {
        let harness = await ServerHarness()
        let handles = try await Self.publish(on: harness.server)
        try await Self.subscribeAndLeave(harness, configurations: [
            (AttributeDatabase.serviceChangedHandle, .indication), (handles.indicated, .indication),
        ])
        _ = try await harness.server.updateValue([4], forHandle: handles.indicated)
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)

        let back = try await Self.client(harness, handle: 0x0042)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        let first = try #require(await back.recorder.next(matching: { $0.first == ATTOpcode.handleValueIndication.rawValue }))
        #expect(try ATTPDU.decode(first) == .handleValueIndication(.init(handle: AttributeDatabase.serviceChangedHandle, value: [0x01, 0x00, 0xFF, 0xFF])))
        back.send(.handleValueConfirmation(.init()))
        let second = try #require(await back.recorder.next(matching: { $0.first == ATTOpcode.handleValueIndication.rawValue }))
        #expect(try ATTPDU.decode(second) == .handleValueIndication(.init(handle: handles.indicated, value: [4])))
        #expect(await eventually { await harness.server.isChangeAware(connectionHandle: 0x0042) == true }, "the confirmation made it aware")

        // Unchanged database: no Service Changed the next time.
        back.send(.handleValueConfirmation(.init()))
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })
        let again = try await Self.client(harness, handle: 0x0043)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0043)
        #expect(await eventually { await harness.server.subscriptions(forHandle: handles.indicated).map(\.connectionHandle) == [0x0043] })
        _ = try await again.request(.readRequest(.init(handle: handles.plain)))
        #expect(Self.pushes(again).isEmpty)
    }

    @Test("Removing a service drops the subscriptions and indications kept for it")
    func removedServiceForgotten() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(Self.definition)
        let indicated = try #require(published.characteristic(Self.indicated)).valueHandle
        try await Self.subscribeAndLeave(harness, configurations: [(indicated, .indication)])
        _ = try await harness.server.updateValue([4], forHandle: indicated)
        try await harness.server.removeService(published)
        #expect(await harness.server.bondedClientState(of: Self.bonded)?.subscriptions.isEmpty == true)
        _ = try await harness.server.addService(Self.definition)
        let back = try await Self.client(harness, handle: 0x0042)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        #expect(await eventually { await harness.server.bondedClientState(of: Self.bonded) != nil })
        _ = try await back.request(.readRequest(.init(handle: indicated)))
        #expect(await harness.server.subscriptions(forHandle: indicated).isEmpty)
        #expect(Self.pushes(back).isEmpty)
    }

    @Test("State stored before subscriptions were kept decodes with none")
    func oldStateDecodes() throws {
        let old = #"{"supportedFeatures":1,"knownDatabaseHash":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}"#
        let state = try JSONDecoder().decode(GATTBondedClientState.self, from: Data(old.utf8))
        #expect(state.supportedFeatures == 1 && state.subscriptions.isEmpty)
        let stored = GATTBondedClientState(supportedFeatures: 0, subscriptions: [
            GATTStoredSubscription(valueHandle: 0x0010, characteristicUUID: "2A37", configuration: .notification),
        ])
        #expect(try JSONDecoder().decode(GATTBondedClientState.self, from: JSONEncoder().encode(stored)) == stored)
    }
}

@Suite("Bonded client registry")
struct BondedClientRegistryTests {
    static func identity(_ n: UInt64) -> DeviceAddress { DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_00 + n), type: .random) }
    static func subscribed(_ handle: UInt16, _ configuration: ClientCharacteristicConfiguration) -> GATTBondedClientState {
        GATTBondedClientState(subscriptions: [GATTStoredSubscription(valueHandle: handle, characteristicUUID: "FFF1", configuration: configuration)])
    }

    @Test("Only away clients subscribed to the value get it; one present is not concerned")
    func awayOnly() {
        var registry = BondedClientRegistry(capacity: 8)
        _ = registry.arrive(Self.identity(1), loaded: nil)
        registry.update(Self.identity(1), state: Self.subscribed(0x10, .indication))
        registry.preload(Self.identity(2), state: Self.subscribed(0x10, .indication))
        registry.preload(Self.identity(3), state: Self.subscribed(0x20, .indication))
        #expect(registry.valueChanged([1], handle: 0x10, notifiesLatestValueOnReconnection: false, maximumDeferredIndications: 4) == [Self.identity(2)])
        registry.leave(Self.identity(1), state: nil)
        #expect(registry.valueChanged([2], handle: 0x10, notifiesLatestValueOnReconnection: false, maximumDeferredIndications: 4)
                == [Self.identity(1), Self.identity(2)])
        let arrival = registry.arrive(Self.identity(2), loaded: nil)
        #expect(arrival.deferredIndications.map(\.value) == [[1], [2]])
        #expect(registry.valueChanged([3], handle: 0x10, notifiesLatestValueOnReconnection: false, maximumDeferredIndications: 4) == [Self.identity(1)])
    }

    @Test("At capacity the least recently seen away client goes, its kept indications counted as dropped")
    func capacity() {
        var registry = BondedClientRegistry(capacity: 2)
        registry.preload(Self.identity(1), state: Self.subscribed(0x10, .indication))
        registry.preload(Self.identity(2), state: Self.subscribed(0x10, .indication))
        registry.preload(Self.identity(3), state: Self.subscribed(0x10, .indication))
        #expect(registry.count == 2, "a preload never evicts")
        _ = registry.valueChanged([1], handle: 0x10, notifiesLatestValueOnReconnection: false, maximumDeferredIndications: 4)
        _ = registry.arrive(Self.identity(3), loaded: nil)
        #expect(registry.count == 2 && !registry.knows(Self.identity(1)) && registry.knows(Self.identity(2)))
        #expect(registry.takeDrops() == 1)
        #expect(registry.takeDrops() == 0)
    }
}
