import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// The security each ATT PDU and each pushed value sees, between our central host and our
/// peripheral host on the virtual link: the link's security changes in the controller's
/// order, and removing a bond takes the trust away from a link still encrypted with its key.
@Suite("Link security seen by requests and pushed values", .timeLimit(.minutes(1)))
struct HostLinkSecurityTests {
    static let service: BluetoothUUID = "F10D"
    static let secret: BluetoothUUID = "F10E"
    static let marker: BluetoothUUID = "F10F"

    /// `secret` needs an encrypted link to be read or pushed; `marker` needs nothing.
    static let definition = GATTServiceDefinition(uuid: service, characteristics: [
        GATTCharacteristicDefinition(uuid: secret, properties: [.read, .notify], permissions: [.readEncryptionRequired], value: [0x42]),
        GATTCharacteristicDefinition(uuid: marker, properties: [.notify], value: [0]),
    ])

    /// Core 6.0, Vol 3, Part C, 10.3.1 with Vol 4, Part E, 7.7.8: the peripheral's controller
    /// reports Encryption Change and then hands over the central's next request; the request
    /// is served with the new security even when both arrive in one batch of the transport
    /// (the host actor has not handled the event yet).
    @Test("A request right after Encryption Change, in the same batch, is served with the new security")
    func requestInTheBatchOfTheEncryptionChange() async throws {
        let pair = try await HostPair.make()
        _ = try await pair.peripheral.server.addService(Self.definition)
        let (first, firstIncoming) = try await pair.connect()
        _ = try await pair.central.pair(first)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        try await pair.disconnect(first, firstIncoming)

        let (connection, incoming) = try await pair.connect()
        let secret = try await connection.gatt.characteristic(Self.secret, inService: Self.service)
        pair.peripheralFilter.holdEverything { event in
            switch event {
            case .encryptionChange, .encryptionChangeV2: return true
            default: return false
            }
        }
        // Encrypts with the bond's key: the peripheral's host answers the LTK Request, and its
        // Encryption Change waits in the filter.
        let security = try await pair.central.secure(connection, allowPairing: false)
        #expect(security.isEncrypted && security.isBonded)
        let read = Task { try await connection.gatt.read(secret) }
        try await waitUntil("the Encryption Change and the read request held together") {
            pair.peripheralFilter.held.contains { $0.indicator == .acl }
        }
        #expect(pair.peripheralFilter.held.first?.indicator == .event, "the event first, then the request")
        pair.peripheralFilter.releaseHeld()
        #expect(try await read.value == [0x42])
        #expect(incoming.security.isEncrypted && incoming.security.isBonded)
        await pair.shutdown()
    }

    /// Removing a bond while its peer is connected: the link stays up and encrypted with the
    /// old key, but the peer is trusted no more.
    @Test("A bond removed mid-connection: nothing protected reaches the central any more, read or pushed")
    func bondRemovedMidConnection() async throws {
        let pair = try await HostPair.make()
        let published = try await pair.peripheral.server.addService(Self.definition)
        let secretHandle = try #require(published.characteristic(Self.secret)).valueHandle
        let markerHandle = try #require(published.characteristic(Self.marker)).valueHandle
        let (connection, incoming) = try await pair.connect()
        _ = try await pair.central.pair(connection)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        let identity = try #require(await pair.peripheral.bonds().first).peerIdentity
        #expect(incoming.security.bondIdentity == identity)

        let secret = try await connection.gatt.characteristic(Self.secret, inService: Self.service)
        let marker = try await connection.gatt.characteristic(Self.marker, inService: Self.service)
        var arrivals = connection.gatt.notifications().makeAsyncIterator()
        let subscriptions = [
            try await connection.gatt.subscribe(to: secret) { _ in },
            try await connection.gatt.subscribe(to: marker) { _ in },
        ]
        #expect(try await pair.peripheral.server.updateValue([1], forHandle: secretHandle).notified == [incoming.handle])
        #expect(await arrivals.next() == GATTNotification(handle: secretHandle, value: [1], isIndication: false))

        let events = await pair.peripheral.events()
        #expect(try await pair.peripheral.removeBond(with: identity))
        #expect(incoming.security.isEncrypted && incoming.security.isBondRemoved && incoming.security.bondIdentity == nil)
        let announced = try await withTimeout("the peripheral's securityChanged event") {
            for await event in events {
                if case let .securityChanged(changed, security) = event, changed === incoming { return security }
            }
            throw TestTimeout(description: "events ended")
        }
        #expect(announced.isBondRemoved)

        let update = try await pair.peripheral.server.updateValue([2], forHandle: secretHandle)
        #expect(update.withheld == [.init(connectionHandle: incoming.handle, reason: .bondRemoved)] && update.notified.isEmpty)
        #expect(try await pair.peripheral.server.updateValue([9], forHandle: markerHandle).notified == [incoming.handle])
        // The link keeps its order: the next value the central gets is the marker, so [2] never left.
        #expect(await arrivals.next() == GATTNotification(handle: markerHandle, value: [9], isIndication: false))
        await #expect { try await connection.gatt.read(secret) } throws: { error in
            if case let HostError.att(att) = error { att.code == .insufficientAuthentication } else { false }
        }
        #expect(connection.isConnected && connection.security.isEncrypted)

        // Paired again on the same link (the key refreshes): trusted again, values flow again.
        _ = try await pair.central.pair(connection)
        try await waitUntil("the peripheral's second pairing finished") { pair.peripheralAgent.outcomes.count == 2 }
        #expect(incoming.security.bondIdentity == identity && !incoming.security.isBondRemoved)
        #expect(try await pair.peripheral.server.updateValue([3], forHandle: secretHandle).notified == [incoming.handle])
        #expect(await arrivals.next() == GATTNotification(handle: secretHandle, value: [3], isIndication: false))
        subscriptions.forEach { $0.cancel() }
        await pair.shutdown()
    }

    /// The GATT server's robust caching state of a bonded client is kept with its bond, and
    /// taken up only on a link encrypted with that bond's key.
    @Test("A bonded client's robust caching state is stored with its bond and comes back from it")
    func cachingStateStoredWithTheBond() async throws {
        let pair = try await HostPair.make()
        let published = try await pair.peripheral.server.addService(Self.definition)
        let secretHandle = try #require(published.characteristic(Self.secret)).valueHandle
        let (first, firstIncoming) = try await pair.connect()
        _ = try await pair.central.pair(first)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        #expect(try await first.gatt.enableRobustCaching())
        try await pair.disconnect(first, firstIncoming)
        let identity = try #require(await pair.peripheral.bonds().first).peerIdentity
        let hash = await pair.peripheral.server.databaseHash
        try await waitUntil("the state stored with the bond") {
            await pair.peripheralStore.bond(local: DeviceAddress(TestAddresses.peripheral, type: .public), peer: identity)?.clientState
                == GATTBondedClientState(supportedFeatures: 0x01, knownDatabaseHash: hash)
        }

        // As after a restart: the server's memory is gone, the bond store is not. The database changes meanwhile.
        await pair.peripheral.server.forgetClient(identity)
        _ = try await pair.peripheral.server.addService(GATTServiceDefinition(uuid: "F20D", characteristics: [
            GATTCharacteristicDefinition(uuid: "F20E", properties: [.read], value: [1]),
        ]))
        let (connection, incoming) = try await pair.connect()
        // Before encryption the peer is anyone at that address: served as a new client.
        #expect(try await connection.gatt.readValue(handle: 0x0001).isEmpty == false)
        #expect(await pair.peripheral.server.clientSupportedFeatures(connectionHandle: incoming.handle) == 0x00)
        _ = try await pair.central.secure(connection, allowPairing: false)
        try await waitUntil("the peripheral's link encrypted") { incoming.security.bondIdentity == identity }
        await #expect { try await connection.gatt.readValue(handle: secretHandle) } throws: { error in
            if case let HostError.att(att) = error { att.code == .databaseOutOfSync } else { false }
        }
        #expect(await pair.peripheral.server.clientSupportedFeatures(connectionHandle: incoming.handle) == 0x01)

        // The bond goes, and its state with it.
        #expect(try await pair.peripheral.removeBond(with: identity))
        #expect(await pair.peripheralStore.bond(local: DeviceAddress(TestAddresses.peripheral, type: .public), peer: identity) == nil)
        await pair.shutdown()
    }
}
