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

    static let bonded = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_01), type: .random)
    static let stranger = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_02), type: .random)
    /// A link encrypted with the key of the bond with ``bonded``.
    static let bondedLink = LinkSecurity(isEncrypted: true, isSecureConnections: true, keySize: 16, bondIdentity: bonded)

    @Test("A bonded client's features and awareness outlast its connection, under its bond; an unbonded client starts afresh")
    func bondedClientsAreRemembered() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0041)
        _ = try await robustClient(harness, handle: 0x0041, peer: Self.bonded)
        _ = try await robustClient(harness, handle: 0x0042, peer: Self.stranger)
        harness.disconnect(handle: 0x0041)
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty }, "both connections closed")
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)

        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0043)
        let again = harness.rawBearer(handle: 0x0043, peer: Self.bonded)
        let refused = try await again.expectError(.readRequest(.init(handle: readOnly)))
        #expect(refused.code == .databaseOutOfSync, "the database changed while the bonded client was away")
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0043) == 0x01)

        let stranger = harness.rawBearer(handle: 0x0044, peer: Self.stranger)
        #expect(try await stranger.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))

        // The bond goes (its link first): nothing is kept of the client any more.
        harness.disconnect(handle: 0x0043)
        #expect(await eventually { await harness.server.connectionHandles == [0x0044] }, "the bonded connection closed")
        await harness.server.forgetClient(Self.bonded)
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0045)
        let forgotten = harness.rawBearer(handle: 0x0045, peer: Self.bonded)
        #expect(try await forgotten.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
    }

    @Test("A peer at a bonded client's address without its keys neither takes up nor overwrites the client's state")
    func spooferNeitherReadsNorWrites() async throws {
        let harness = await ServerHarness()
        // What the server may tell from addresses alone: the spoofer's is the bonded one.
        await harness.server.setKeyAvailability { $0 == Self.bonded }
        let published = try await harness.server.addService(TestDatabase.definition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0041)
        _ = try await robustClient(harness, handle: 0x0041, peer: Self.bonded)
        harness.disconnect(handle: 0x0041)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)

        // The spoofer never encrypts: a new client, served, with none of the bonded client's features.
        let spoofer = harness.rawBearer(handle: 0x0042, peer: Self.bonded)
        #expect(try await spoofer.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
        #expect(try await spoofer.request(.readRequest(.init(handle: Self.featuresHandle))) == .readResponse(.init(value: [0x00])))
        // What it does (learn the new database, set features) must not become the bonded client's.
        _ = try await spoofer.request(.readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                               attributeType: GATTAttributeType.databaseHash)))
        #expect(try await spoofer.request(.writeRequest(.init(handle: Self.featuresHandle, value: [0x01]))) == .writeResponse(.init()))
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })

        // The real client, encrypted with the bond's key: still change-unaware, as it left.
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0043)
        let real = harness.rawBearer(handle: 0x0043, peer: Self.bonded)
        #expect(try await real.expectError(.readRequest(.init(handle: readOnly))).code == .databaseOutOfSync)
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0043) == 0x01)
    }

    @Test("The state is taken up once the link is encrypted with the bond's key, not before; what the client learned meanwhile counts")
    func stateTakenUpOnEncryption() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0041)
        _ = try await robustClient(harness, handle: 0x0041, peer: Self.bonded)
        harness.disconnect(handle: 0x0041)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)

        // Not yet encrypted: a new client.
        let link = harness.rawBearer(handle: 0x0042, peer: Self.bonded)
        #expect(try await link.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0042) == 0x00)
        // Encrypted with the bond's key: the client it is, change-unaware since it left.
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0042)
        #expect(try await link.expectError(.readRequest(.init(handle: readOnly))).code == .databaseOutOfSync)
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0042) == 0x01)
        harness.disconnect(handle: 0x0042)
        #expect(await eventually { await harness.server.connectionHandles.isEmpty })

        // It left change-unaware. This time it reads the Database Hash before encrypting: it
        // knows the database.
        let learned = harness.rawBearer(handle: 0x0043, peer: Self.bonded)
        _ = try await learned.request(.readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                               attributeType: GATTAttributeType.databaseHash)))
        harness.server.setSecurity(Self.bondedLink, connectionHandle: 0x0043)
        #expect(try await learned.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
        #expect(await harness.server.clientSupportedFeatures(connectionHandle: 0x0043) == 0x01)
    }

    /// A storage like the host's bond store: what was saved, by identity.
    final class RecordingStorage: Sendable {
        private let states = Mutex<[DeviceAddress: GATTBondedClientState]>([:])
        var saved: [DeviceAddress: GATTBondedClientState] { states.withLock { $0 } }
        var storage: GATTClientStateStorage {
            GATTClientStateStorage(load: { identity in self.states.withLock { $0[identity] } },
                                   save: { identity, state in self.states.withLock { $0[identity] = state } })
        }
    }

    @Test("The state goes to the storage under the bond's identity and comes back after a restart")
    func stateOutlastsARestart() async throws {
        let storage = RecordingStorage()
        let first = await ServerHarness()
        await first.server.setClientStateStorage(storage.storage)
        _ = try await first.server.addService(TestDatabase.definition)
        let hash = await first.server.databaseHash
        first.server.setSecurity(Self.bondedLink, connectionHandle: 0x0041)
        _ = try await robustClient(first, handle: 0x0041, peer: Self.bonded)
        _ = try await robustClient(first, handle: 0x0042, peer: Self.stranger)
        first.disconnect(handle: 0x0041)
        first.disconnect(handle: 0x0042)
        #expect(await eventually { storage.saved[Self.bonded] != nil }, "the bonded client's state saved")
        #expect(storage.saved == [Self.bonded: GATTBondedClientState(supportedFeatures: 0x01, knownDatabaseHash: hash)],
                "only the bonded client's, under its identity")

        // Run again, with a database that changed meanwhile.
        let second = await ServerHarness()
        await second.server.setClientStateStorage(storage.storage)
        let published = try await second.server.addService(TestDatabase.definition)
        _ = try await second.server.addService(TestDatabase.batteryDefinition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        second.server.setSecurity(Self.bondedLink, connectionHandle: 0x0041)
        let again = second.rawBearer(handle: 0x0041, peer: Self.bonded)
        #expect(try await again.expectError(.readRequest(.init(handle: readOnly))).code == .databaseOutOfSync)
        #expect(await second.server.clientSupportedFeatures(connectionHandle: 0x0041) == 0x01)
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
