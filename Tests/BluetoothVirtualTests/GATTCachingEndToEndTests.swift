import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// GATT caching between our central host and our peripheral host on the virtual link
/// (Core 6.0, Vol 3, Part G, 2.5.2): a bonded reconnection with an unchanged Database Hash
/// discovers nothing; a changed database is discovered again; robust caching refuses a
/// client that missed a change.
@Suite("GATT caching between our hosts on the virtual link", .timeLimit(.minutes(1)))
struct GATTCachingEndToEndTests {
    static let service: BluetoothUUID = "F00D"
    static let value: BluetoothUUID = "F00E"
    static let extra: BluetoothUUID = "F10D"
    static var peripheralIdentity: DeviceAddress { DeviceAddress(TestAddresses.peripheral, type: .public) }

    static var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: value, properties: [.read, .notify], value: [1]),
        ])
    }

    static var extraDefinition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: extra, characteristics: [GATTCharacteristicDefinition(uuid: "F10E", properties: .read, value: [2])])
    }

    @Test func bondedReconnectionSkipsDiscoveryUntilTheDatabaseChanges() async throws {
        let pair = try await HostPair.make()
        _ = try await pair.peripheral.server.addService(Self.definition)
        let (first, firstIncoming) = try await pair.connect()
        #expect(try await pair.central.prepareDatabase(of: first) == .notEligible, "neither bonded nor trusted")
        _ = try await pair.central.pair(first)
        let hash = await pair.peripheral.server.databaseHash
        #expect(try await pair.central.prepareDatabase(of: first) == .discovered(hash: hash))
        #expect(first.gatt.discoveryRequestCount > 0)
        #expect(await pair.peripheral.server.clientSupportedFeatures(connectionHandle: firstIncoming.handle) == 0x01, "robust caching on")
        try await pair.disconnect(first, firstIncoming)

        let (second, secondIncoming) = try await pair.connect()
        #expect(try await pair.central.prepareDatabase(of: second) == .reused(hash: hash))
        #expect(try await second.gatt.enableServiceChangedIndications())
        let found = try await second.gatt.characteristic(Self.value, inService: Self.service)
        #expect(try await second.gatt.readValue(handle: found.valueHandle) == [1])
        #expect(second.gatt.discoveryRequestCount == 0, "nothing discovered over the air")
        try await pair.disconnect(second, secondIncoming)

        // The peripheral's database changes while the central is away.
        _ = try await pair.peripheral.server.addService(Self.extraDefinition)
        let changed = await pair.peripheral.server.databaseHash
        #expect(changed != hash)
        let (third, thirdIncoming) = try await pair.connect()
        #expect(try await pair.central.prepareDatabase(of: third) == .discovered(hash: changed))
        #expect(third.gatt.discoveryRequestCount > 0)
        #expect(third.gatt.knownDatabase?.contains { $0.service.uuid == Self.extra } == true)
        #expect(await pair.central.gattDatabaseCache.database(for: Self.peripheralIdentity)?.hash == changed)
        try await pair.disconnect(third, thirdIncoming)

        // Forgetting the bond forgets the database.
        #expect(try await pair.central.removeBond(with: Self.peripheralIdentity))
        #expect(await pair.central.gattDatabaseCache.database(for: Self.peripheralIdentity) == nil)
        await pair.shutdown()
    }

    @Test func aChangeDuringTheConnectionIsRefusedWithDatabaseOutOfSync() async throws {
        let pair = try await HostPair.make()
        let published = try await pair.peripheral.server.addService(Self.definition)
        let (connection, incoming) = try await pair.connect()
        pair.central.setDatabaseTrusted(true, for: Self.peripheralIdentity)
        #expect(try await pair.central.prepareDatabase(of: connection) == .discovered(hash: await pair.peripheral.server.databaseHash))
        try await pair.peripheral.server.removeService(published)
        _ = try await pair.peripheral.server.addService(Self.extraDefinition)

        // The central did not enable Service Changed: it learns of the change from the refusal.
        let handle = try #require(published.characteristic(Self.value)).valueHandle
        await #expect(throws: HostError.att(ATTError(requestOpcode: .readRequest, handle: 0, code: .databaseOutOfSync))) {
            try await connection.gatt.readValue(handle: handle)
        }
        #expect(connection.gatt.knownDatabase == nil)
        try await waitUntil("the stale database left the cache") {
            await pair.central.gattDatabaseCache.database(for: Self.peripheralIdentity) == nil
        }
        #expect(await pair.peripheral.server.isChangeAware(connectionHandle: incoming.handle) == false)
        // Preparing again reads the hash (change-aware again) and discovers the new database.
        #expect(try await pair.central.prepareDatabase(of: connection) == .discovered(hash: await pair.peripheral.server.databaseHash))
        #expect(connection.gatt.knownDatabase?.map(\.service.uuid).contains(Self.extra) == true)
        #expect(connection.gatt.knownDatabase?.map(\.service.uuid).contains(Self.service) == false)
        await pair.shutdown()
    }

    /// A device at a bonded peer's address that does not hold the bond's key (another host on
    /// the peer's controller, with no bonds and another database): the central neither uses
    /// nor replaces the peer's cached database on its link; the real peer, back, gets its own
    /// database from the cache, over a link encrypted with the bond's key.
    @Test func aDeviceAtABondedPeersAddressWithoutItsKeyNeitherUsesNorChangesTheCache() async throws {
        // Not a TwoDevices: three hosts take the peripheral's controller one after another.
        let link = VirtualLink()
        let centralController = link.addController(name: "central", address: TestAddresses.central)
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let central = LEHost(transport: centralController.makeTransport())
        try await central.powerOn()
        let realBonds = InMemoryBondStore()
        func peripheralHost(bonds: InMemoryBondStore, services: [GATTServiceDefinition]) async throws -> LEHost {
            var configuration = HostConfiguration()
            configuration.bondStore = bonds
            let host = LEHost(transport: peripheralController.makeTransport(), configuration: configuration)
            try await host.powerOn()
            for service in services { _ = try await host.server.addService(service) }
            try await host.startAdvertising(AdvertisingData())
            return host
        }
        func connect() async throws -> Connection {
            try await central.connect(to: Self.peripheralIdentity, timeout: .seconds(5))
        }

        let real = try await peripheralHost(bonds: realBonds, services: [Self.definition])
        let first = try await connect()
        _ = try await central.pair(first)
        let hash = await real.server.databaseHash
        #expect(try await central.prepareDatabase(of: first) == .discovered(hash: hash))
        let cached = try #require(await central.gattDatabaseCache.database(for: Self.peripheralIdentity))
        try await first.disconnect()
        await real.shutdown()

        // Another device takes the controller, and so the address: no keys, another database.
        let spoofer = try await peripheralHost(bonds: InMemoryBondStore(), services: [Self.extraDefinition, Self.definition])
        let spoofed = try await connect()
        #expect(try await central.prepareDatabase(of: spoofed) == .unverified)
        #expect(spoofed.gatt.knownDatabase == nil, "the cached database is not used on its link")
        #expect(await central.gattDatabaseCache.database(for: Self.peripheralIdentity) == cached, "nor replaced")
        #expect(!spoofed.security.isEncrypted)
        try await spoofed.disconnect()
        await spoofer.shutdown()

        // The real peer is back: its database from the cache, its values at their handles.
        let back = try await peripheralHost(bonds: realBonds, services: [Self.definition])
        let again = try await connect()
        #expect(try await central.prepareDatabase(of: again) == .reused(hash: hash))
        #expect(again.security.isEncrypted && again.security.isBonded)
        let value = try await again.gatt.characteristic(Self.value, inService: Self.service)
        #expect(try await again.gatt.readValue(handle: value.valueHandle) == [1])
        #expect(again.gatt.discoveryRequestCount == 0)
        try await again.disconnect()
        await back.shutdown()
        await central.shutdown()
    }

    /// Prints reconnection times with and without the cache (a database of 12 services of 6
    /// characteristics) and checks the PDU counts behind them.
    @Test func reconnectionWithAndWithoutTheCache() async throws {
        let pair = try await HostPair.make()
        for index in 0..<12 {
            _ = try await pair.peripheral.server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0xA000 + index * 16)), characteristics:
                (1...6).map { GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xA000 + index * 16 + $0)), properties: [.read, .notify], value: [1]) }))
        }
        pair.central.setDatabaseTrusted(true, for: Self.peripheralIdentity)
        let clock = ContinuousClock()
        var uncached: [Duration] = []
        var cached: [Duration] = []
        for round in 0..<6 {
            if round.isMultiple(of: 2) { await pair.central.gattDatabaseCache.removeDatabase(for: Self.peripheralIdentity) }
            let start = clock.now
            let (connection, incoming) = try await pair.connect()
            let outcome = try await pair.central.prepareDatabase(of: connection)
            let elapsed = clock.now - start
            if round.isMultiple(of: 2) {
                #expect(outcome == .discovered(hash: await pair.peripheral.server.databaseHash))
                uncached.append(elapsed)
            } else {
                #expect(outcome == .reused(hash: await pair.peripheral.server.databaseHash))
                #expect(connection.gatt.discoveryRequestCount == 0)
                cached.append(elapsed)
            }
            try await pair.disconnect(connection, incoming)
        }
        print("GATT caching on the virtual link, connect + prepareDatabase (12 services x 6 characteristics): "
              + "without cache \(uncached.map(\.formattedMilliseconds)), with cache \(cached.map(\.formattedMilliseconds))")
        await pair.shutdown()
    }
}

private extension Duration {
    var formattedMilliseconds: String { String(format: "%.1f ms", self / .milliseconds(1)) }
}
