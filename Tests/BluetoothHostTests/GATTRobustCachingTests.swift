import BluetoothCore
@testable import BluetoothHost
import Synchronization
import Testing

/// Robust caching (Core 6.0, Vol 3, Part G, 2.5.2.1): this device's server keeps each
/// client's features and change awareness; its client uses a known database and drops it
/// when the server says it changed.
@Suite("GATT robust caching", .timeLimit(.minutes(1)))
struct GATTRobustCachingTests {
    static let featuresHandle = AttributeDatabase.clientSupportedFeaturesHandle

    /// A raw client that enabled robust caching on a server publishing the test database.
    private func robustClient(_ harness: ServerHarness, handle: UInt16 = 0x0041, peer: DeviceAddress? = nil) async throws -> RawBearer {
        let raw = harness.rawBearer(handle: handle, peer: peer)
        let answer = try await raw.request(.writeRequest(.init(handle: Self.featuresHandle, value: [0x01])))
        #expect(answer == .writeResponse(.init()))
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: handle) == 0x01)
        return raw
    }

    @Test("A change-unaware client is refused once with Database Out Of Sync, its commands ignored, then served")
    func outOfSyncOnceThenAware() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        let writeOnly = try #require(published.characteristic(TestDatabase.writeOnly)).valueHandle
        let raw = try await robustClient(harness)
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)
        #expect(await harness.server.isChangeAware(connectionHandle: raw.handle) == false)

        // Exchange MTU names no attribute: answered even now.
        #expect(try await raw.request(.exchangeMTURequest(.init(clientRxMTU: 100))) == .exchangeMTUResponse(.init(serverRxMTU: 517)))
        raw.send(.writeCommand(.init(handle: writeOnly, value: [9])))
        let refused = try await raw.expectError(.readRequest(.init(handle: readOnly)))
        #expect(refused.code == .databaseOutOfSync)
        #expect(refused.handle == 0x0000)
        #expect(await harness.server.value(forHandle: writeOnly) == [0], "the command of a change-unaware client was ignored")
        #expect(try await raw.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
        #expect(await harness.server.isChangeAware(connectionHandle: raw.handle) == true)
    }

    @Test("Reading the Database Hash with Read By Type is served to a change-unaware client and makes it aware")
    func hashReadMakesAware() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let raw = try await robustClient(harness)
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)
        let answer = try await raw.request(.readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                                    attributeType: GATTAttributeType.databaseHash)))
        guard case let .readByTypeResponse(page) = answer else {
            Issue.record("expected a Read By Type Response, got \(answer)")
            return
        }
        #expect(page.entries.map(\.handle) == [AttributeDatabase.databaseHashHandle])
        #expect(page.entries.first.map { Array($0.value) } == (await harness.server.databaseHash).bytes)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        #expect(try await raw.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
    }

    @Test("Confirming the Service Changed indication makes the client change-aware")
    func confirmationMakesAware() async throws {
        let harness = await ServerHarness()
        let raw = try await robustClient(harness)
        #expect(try await raw.request(.writeRequest(.init(handle: AttributeDatabase.serviceChangedConfigurationHandle, value: [0x02, 0x00])))
                == .writeResponse(.init()))
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        let indication = try #require(await raw.recorder.next())
        #expect(indication.first == ATTOpcode.handleValueIndication.rawValue)
        raw.send(.handleValueConfirmation(.init()))
        #expect(await eventually { await harness.server.isChangeAware(connectionHandle: raw.handle) == true }, "the confirmation counted")
        let level = try #require(battery.characteristic(TestDatabase.batteryLevel)).valueHandle
        #expect(try await raw.request(.readRequest(.init(handle: level))) == .readResponse(.init(value: [100])))
    }

    @Test("A client without robust caching is never refused; none may clear a feature bit")
    func withoutRobustCaching() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let plain = harness.rawBearer()
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        #expect(try await plain.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))

        let robust = try await robustClient(harness, handle: 0x0042)
        let cleared = try await robust.expectError(.writeRequest(.init(handle: Self.featuresHandle, value: [0x00])))
        #expect(cleared.code == .valueNotAllowed)
        #expect(try await robust.request(.readRequest(.init(handle: Self.featuresHandle))) == .readResponse(.init(value: [0x01])))
    }

    @Test("A bonded client's features and awareness outlast its connection; an unbonded client starts afresh")
    func bondedClientsAreRemembered() async throws {
        let harness = await ServerHarness()
        let bonded = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_01), type: .random)
        await harness.server.setKeyAvailability { $0 == bonded }
        let published = try await harness.server.addService(TestDatabase.definition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        _ = try await robustClient(harness, handle: 0x0041, peer: bonded)
        _ = try await robustClient(harness, handle: 0x0042, peer: DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_02), type: .random))
        harness.disconnect(handle: 0x0041)
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty }, "both connections closed")
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)

        let again = harness.rawBearer(handle: 0x0043, peer: bonded)
        let refused = try await again.expectError(.readRequest(.init(handle: readOnly)))
        #expect(refused.code == .databaseOutOfSync, "the database changed while the bonded client was away")
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0043) == 0x01)

        let stranger = harness.rawBearer(handle: 0x0044, peer: DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_02), type: .random))
        #expect(try await stranger.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))

        // The bond goes (its link first): nothing is kept of the client any more.
        harness.disconnect(handle: 0x0043)
        #expect(await eventually { await harness.server.connectionHandles == [0x0044] }, "the bonded connection closed")
        await harness.server.forgetClient(bonded)
        let forgotten = harness.rawBearer(handle: 0x0045, peer: bonded)
        #expect(try await forgotten.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
    }

    // MARK: Client

    @Test("A known database answers discovery without a PDU")
    func knownDatabaseAnswersDiscovery() async throws {
        let harness = await ServerHarness()
        _ = try await harness.server.addService(TestDatabase.definition)
        let discoverer = harness.connectClient(handle: 0x0040)
        let database = try await discoverer.discoverDatabase()
        #expect(discoverer.discoveryRequestCount > 0)

        let client = harness.connectClient(handle: 0x0041)
        client.useKnownDatabase(database)
        #expect(try await client.discoverDatabase() == database)
        #expect(try await client.discoverAllPrimaryServices() == database.map(\.service))
        let service = try #require(try await client.discoverPrimaryServices(uuid: TestDatabase.service).first)
        let characteristics = try await client.discoverCharacteristics(of: service)
        let described = try #require(characteristics.first { $0.uuid == TestDatabase.described })
        #expect(try await client.discoverDescriptors(of: described).map(\.uuid).contains(GATTAttributeType.characteristicUserDescription))
        #expect(try await client.characteristic(TestDatabase.readOnly, inService: TestDatabase.service).uuid == TestDatabase.readOnly)
        #expect(try await client.enableServiceChangedIndications())
        #expect(client.discoveryRequestCount == 0)
    }

    @Test("Database Out Of Sync drops the known database, tells the stale handler and throws the ATT error")
    func outOfSyncDropsTheKnownDatabase() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let database = try await client.discoverDatabase()
        client.useKnownDatabase(database)
        #expect(try await client.enableRobustCaching())
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0040) == 0x01)
        let stale = Mutex(0)
        client.onDatabaseStale { stale.withLock { $0 += 1 } }
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)

        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        await #expect(throws: HostError.att(ATTError(requestOpcode: .readRequest, handle: 0, code: .databaseOutOfSync))) {
            try await client.readValue(handle: readOnly)
        }
        #expect(client.knownDatabase == nil)
        #expect(stale.withLock { $0 } == 1)
        #expect(try await client.readValue(handle: readOnly) == [0x42], "served after the refusal")
        let rediscovered = try await client.discoverAllPrimaryServices()
        #expect(rediscovered.map(\.uuid).contains(TestDatabase.battery))
    }

    @Test("A Service Changed indication drops the known database")
    func serviceChangedDropsTheKnownDatabase() async throws {
        let harness = await ServerHarness()
        _ = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        client.useKnownDatabase(try await client.discoverDatabase())
        #expect(try await client.enableServiceChangedIndications())
        let stale = Mutex(0)
        client.onDatabaseStale { stale.withLock { $0 += 1 } }
        var changes = client.serviceChanges().makeAsyncIterator()
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)
        #expect(await changes.next() != nil)
        #expect(client.knownDatabase == nil)
        #expect(stale.withLock { $0 } == 1)
    }
}
