import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// What a bonded peer expects our host to remember, and the pairing features of issue 25, item 6,
/// between our central host and our peripheral host on the virtual link, across reconnections
/// and restarts of either host (a new `LEHost` on the same controller and bond store).
@Suite("Bonded state and pairing features across links and restarts", .timeLimit(.minutes(2)))
struct HostBondedStateTests {
    static let service: BluetoothUUID = "F30D"
    /// Notifies; reads need an encrypted link.
    static let feed: BluetoothUUID = "F30E"
    /// Reads need a 128-bit key.
    static let longKey: BluetoothUUID = "F30F"
    /// Reads need security level 4.
    static let levelFour: BluetoothUUID = "F310"

    static let definition = GATTServiceDefinition(uuid: service, characteristics: [
        GATTCharacteristicDefinition(uuid: feed, properties: [.read, .notify], permissions: [.readEncryptionRequired], value: [0]),
        GATTCharacteristicDefinition(uuid: longKey, properties: [.read], permissions: [.readEncryptionRequired], minimumKeySize: 16,
                                     value: Array("long".utf8)),
        GATTCharacteristicDefinition(uuid: levelFour, properties: [.read], permissions: [.readEncryptionRequired],
                                     requiresSecureConnections: true, value: Array("level 4".utf8)),
    ])

    /// Every notification a connection's client receives, subscribed or not.
    final class Received: Sendable {
        private let values = Mutex<[GATTNotification]>([])
        var items: [GATTNotification] { values.withLock { $0 } }

        init(_ connection: Connection) {
            let stream = connection.gatt.notifications()
            Task { [weak self] in for await notification in stream { self?.values.withLock { $0.append(notification) } } }
        }
    }

    @Test("A bonded central's subscription comes back on its next link once encrypted, and after our peripheral's restart; never a CCCD write")
    func subscriptionsLastAcrossLinksAndRestarts() async throws {
        var hosts = try await RestartableHosts.make()
        var feed = try #require(try await hosts.peripheral.server.addService(Self.definition).characteristic(Self.feed)).valueHandle
        let (first, firstIncoming) = try await hosts.connect()
        _ = try await hosts.central.pair(first)
        try await waitUntil("the peripheral's pairing finished") { hosts.peripheralAgent.outcomes.count == 1 }
        let characteristic = try await first.gatt.characteristic(Self.feed, inService: Self.service)
        let values = try await first.gatt.subscribe(to: characteristic)
        try await waitUntil("subscribed") { await hosts.peripheral.server.subscriptions(forHandle: feed).count == 1 }
        #expect(try await hosts.peripheral.server.updateValue([1], forHandle: feed).notified == [firstIncoming.handle])
        var iterator = values.makeAsyncIterator()
        #expect(try await iterator.next() == [1])
        try await hosts.disconnect(first, firstIncoming)

        // The next link: encrypted with the bond, the central gets values without subscribing again.
        try await Self.expectRestored(hosts, feed: feed, value: 2)

        // Our peripheral restarts: a new host on the same controller and bond files.
        try await hosts.restartPeripheral()
        feed = try #require(try await hosts.peripheral.server.addService(Self.definition).characteristic(Self.feed)).valueHandle
        try await Self.expectRestored(hosts, feed: feed, value: 3)

        // The bond goes: so does what was kept with it, on disk too.
        let identity = try #require(await hosts.peripheral.bonds().first).peerIdentity
        #expect(try await hosts.peripheral.removeBond(with: identity))
        #expect(await hosts.peripheral.server.bondedClientState(of: identity) == nil)
        await hosts.shutdown()
    }

    /// The central connects, encrypts with its bond, and gets a value our peripheral updates,
    /// while the peripheral's server hears no Client Characteristic Configuration written.
    static func expectRestored(_ hosts: RestartableHosts, feed: UInt16, value: UInt8) async throws {
        let (connection, incoming) = try await hosts.connect()
        let events = await hosts.peripheral.server.events()
        let written = Mutex<[GATTSubscription]>([])
        let watcher = Task {
            for await event in events {
                if case let .subscriptionChanged(subscription) = event, subscription.connectionHandle == incoming.handle {
                    written.withLock { $0.append(subscription) }
                }
            }
        }
        defer { watcher.cancel() }
        let received = Received(connection)
        // Before encryption the peer is anyone at that address: not subscribed.
        #expect(try await hosts.peripheral.server.updateValue([0xEE], forHandle: feed).notified.isEmpty)
        let security = try await hosts.central.secure(connection, allowPairing: false)
        #expect(security.isBonded)
        try await waitUntil("the subscription restored") {
            await hosts.peripheral.server.subscriptions(forHandle: feed).map(\.connectionHandle) == [incoming.handle]
        }
        #expect(try await hosts.peripheral.server.updateValue([value], forHandle: feed).notified == [incoming.handle])
        try await waitUntil("the value received") { received.items.contains { $0.handle == feed && $0.value == [value] } }
        #expect(!received.items.contains { $0.value == [0xEE] })
        try await waitUntil("the restored subscription announced") { !written.withLock { $0 }.isEmpty }
        let announced = written.withLock { $0 }
        #expect(announced.allSatisfy { $0.isRestored }, "no CCCD written on this link: \(announced)")
        try await hosts.disconnect(connection, incoming)
    }

    /// The attack: a device with the bonded central's address and none of its keys. Unencrypted
    /// it gets nothing; when it pairs (Just Works over a Just Works bond replaces the bond without
    /// a question) it still gets none of the old bond's subscriptions.
    @Test("A device at the bonded central's address without its keys gets no subscription, even once it pairs anew")
    func impostorGetsNoSubscription() async throws {
        let hosts = try await RestartableHosts.make()
        let feed = try #require(try await hosts.peripheral.server.addService(Self.definition).characteristic(Self.feed)).valueHandle
        let (first, firstIncoming) = try await hosts.connect()
        _ = try await hosts.central.pair(first)
        try await waitUntil("the peripheral's pairing finished") { hosts.peripheralAgent.outcomes.count == 1 }
        _ = try await first.gatt.subscribe(to: try await first.gatt.characteristic(Self.feed, inService: Self.service))
        try await waitUntil("subscribed") { await hosts.peripheral.server.subscriptions(forHandle: feed).count == 1 }
        try await hosts.disconnect(first, firstIncoming)
        let identity = try #require(await hosts.peripheral.bonds().first).peerIdentity
        let stored = try #require(await hosts.peripheral.bonds().first?.clientState)
        #expect(stored.subscriptions.map(\.valueHandle) == [feed])

        // The impostor's controller has the central's public address.
        let impostorController = hosts.link.addController(name: "impostor", address: TestAddresses.central, position: .init(x: 0, y: 2))
        let impostor = LEHost(transport: impostorController.makeTransport(), configuration: {
            var configuration = HostConfiguration()
            configuration.bondStore = InMemoryBondStore()
            return configuration
        }())
        try await impostor.powerOn()
        let events = await hosts.peripheral.events()
        try await hosts.peripheral.startAdvertising(AdvertisingData())
        let attack = try await impostor.connect(to: DeviceAddress(TestAddresses.peripheral, type: .public), timeout: .seconds(5))
        let incoming = try await withTimeout("the peripheral's connected event") {
            for await event in events { if case let .connected(incoming) = event { return incoming } }
            throw TestTimeout(description: "events ended")
        }
        #expect(incoming.peer == DeviceAddress(TestAddresses.central, type: .public), "the peripheral sees the bonded address")
        let received = Received(attack)
        #expect(try await hosts.peripheral.server.updateValue([1], forHandle: feed).notified.isEmpty)
        let cccd = try await attack.gatt.readValue(handle: feed + 1)
        #expect(cccd == [0, 0], "the CCCD reads as a new client's")

        // It pairs: a new bond under the claimed identity, with nothing of the old one's state.
        _ = try await impostor.pair(attack)
        try await waitUntil("the peripheral's link encrypted") { incoming.security.bondIdentity == identity }
        #expect(try await hosts.peripheral.server.updateValue([2], forHandle: feed).notified.isEmpty)
        #expect(try await attack.gatt.readValue(handle: feed + 1) == [0, 0])
        #expect(received.items.isEmpty, "nothing pushed to the impostor")
        #expect(await hosts.peripheral.bonds().first?.clientState?.subscriptions.isEmpty != false)
        await impostor.shutdown()
        hosts.link.removeController(impostorController)
        await hosts.shutdown()
    }

    @Test("Legacy OOB between our hosts, the TK made by either side: OOB method, authenticated; a wrong TK fails with Confirm Value Failed",
          arguments: [true, false])
    func legacyOutOfBand(peripheralMakes: Bool) async throws {
        var legacy = SecurityManagerSettings()
        legacy.offersSecureConnections = false
        let pair = try await HostPair.make(central: legacy.withoutBackoff, peripheral: SecurityManagerSettings().withoutBackoff)
        let (maker, taker) = peripheralMakes ? (pair.peripheral, pair.central) : (pair.central, pair.peripheral)
        // A wrong TK first: the taker has another one (a peer that says it has OOB data and
        // has not: it fails, and does not use up the maker's TK for the peer it was made for).
        let data = await maker.makeLegacyOutOfBandData()
        let makerAddress = await maker.identityAddress ?? .init(.zero, type: .public)
        await taker.setPeerLegacyOutOfBandData(LegacyOutOfBandData(address: makerAddress, temporaryKey: 0x1234))
        let (connection, _) = try await pair.connect()
        await #expect { try await pair.central.pair(connection) } throws: { error in
            guard case let HostError.pairingFailed(failure) = error else { return false }
            return failure.reason == .confirmValueFailed
        }
        #expect(!connection.security.isEncrypted)
        #expect(await maker.localLegacyOutOfBand == data, "a failed pairing leaves the TK")

        // The right one, the same TK.
        await taker.setPeerLegacyOutOfBandData(data)
        let security = try await pair.central.pair(connection)
        #expect(security.isAuthenticated && !security.isSecureConnections && security.level == 3)
        try await waitUntil("both outcomes") { pair.centralAgent.outcomes.count == 1 && pair.peripheralAgent.outcomes.count == 1 }
        #expect(pair.centralAgent.outcomes.first?.method == .outOfBand && pair.peripheralAgent.outcomes.first?.method == .outOfBand)
        #expect(pair.centralAgent.shown.isEmpty && pair.peripheralAgent.shown.isEmpty, "no passkey, no number")
        #expect(await maker.localLegacyOutOfBand == nil, "the maker's TK served its pairing and is gone")
        await pair.shutdown()
    }

    @Test("Keypress Notifications: the central types, our peripheral's agent hears entry start and complete; the pairing completes")
    func keypressDelivery() async throws {
        let pair = try await HostPair.make(central: SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true, keypressNotifications: true),
                                           peripheral: SecurityManagerSettings(ioCapability: .displayOnly, keypressNotifications: true))
        let (connection, _) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isAuthenticated)
        try await waitUntil("the peripheral's agent heard both keypresses") { pair.peripheralAgent.keypresses.count == 2 }
        #expect(pair.peripheralAgent.keypresses == [.passkeyEntryStarted, .passkeyEntryCompleted])
        #expect(pair.centralAgent.keypresses.isEmpty)
        await pair.shutdown()
    }

    /// A bond made when the central offered 7-octet keys; our peripheral's characteristic wants
    /// 16. With its settings at 7 the central cannot do better: the read's refusal is the typed
    /// error. Restarted with 16 allowed, Bluejay's raise encrypts with the bond, is refused again
    /// (Encryption Key Size Too Short), pairs again asking for more, and reads.
    @Test("Encryption Key Size Too Short: pairing again for a longer key where the settings allow it; else the typed error")
    func keySizeRepairing() async throws {
        var hosts = try await RestartableHosts.make(central: SecurityManagerSettings(maximumKeySize: 7))
        let longKey = try #require(try await hosts.peripheral.server.addService(Self.definition).characteristic(Self.longKey)).valueHandle
        let (first, firstIncoming) = try await hosts.connect()
        #expect(try await hosts.central.pair(first).keySize == 7)
        await #expect { try await first.raisingSecurity { try await first.gatt.readValue(handle: longKey) } } throws: { error in
            if case let HostError.att(att) = error { att.code == .encryptionKeySizeTooShort } else { false }
        }
        try await hosts.disconnect(first, firstIncoming)

        try await hosts.restartCentral(SecurityManagerSettings())
        let (connection, _) = try await hosts.connect()
        var raised: [ATTErrorCode] = []
        let value = try await connection.raisingSecurity({ try await connection.gatt.readValue(handle: longKey) }, willRaise: { raised.append($0) })
        #expect(value == Array("long".utf8))
        #expect(raised == [.insufficientEncryption, .encryptionKeySizeTooShort])
        #expect(connection.security.keySize == 16)
        #expect(await hosts.central.bonds().map(\.keySize) == [16], "the longer key replaced the bond")
        await hosts.shutdown()
    }

    @Test("A peer that cannot give a longer key: the pairing again fails with Encryption Key Size, a typed error")
    func keySizeRepairingRefused() async throws {
        let pair = try await HostPair.make(central: SecurityManagerSettings().withoutBackoff,
                                           peripheral: SecurityManagerSettings(maximumKeySize: 10).withoutBackoff)
        let longKey = try #require(try await pair.peripheral.server.addService(Self.definition).characteristic(Self.longKey)).valueHandle
        let (connection, _) = try await pair.connect()
        #expect(try await pair.central.pair(connection).keySize == 10)
        await #expect { try await connection.raisingSecurity { try await connection.gatt.readValue(handle: longKey) } } throws: { error in
            guard case let HostError.pairingFailed(.refused(reason, .keySizeTooSmall(size))) = error else { return false }
            return reason == .encryptionKeySize && size == 10
        }
        #expect(connection.security.keySize == 10, "the link keeps its key")
        await pair.shutdown()
    }

    /// Level 4: a legacy Passkey Entry bond is authenticated but not LE Secure Connections. A
    /// central that offers only legacy pairing cannot do better (the refusal is thrown); restarted
    /// with LE Secure Connections, Bluejay's raise pairs again and reads.
    @Test("Security level 4: refused on an authenticated legacy link; pairing again with LE Secure Connections serves it")
    func levelFour() async throws {
        var legacy = SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true)
        legacy.offersSecureConnections = false
        var hosts = try await RestartableHosts.make(central: legacy, peripheral: SecurityManagerSettings(ioCapability: .displayOnly))
        let handle = try #require(try await hosts.peripheral.server.addService(Self.definition).characteristic(Self.levelFour)).valueHandle
        let (first, firstIncoming) = try await hosts.connect()
        let security = try await hosts.central.pair(first, authenticated: true)
        #expect(security.isAuthenticated && !security.isSecureConnections && security.keySize == 16)
        await #expect { try await first.gatt.readValue(handle: handle) } throws: { error in
            if case let HostError.att(att) = error { att.code == .insufficientAuthentication } else { false }
        }
        try await hosts.disconnect(first, firstIncoming)

        var secureConnections = SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true)
        secureConnections.initialRetryInterval = .zero
        try await hosts.restartCentral(secureConnections)
        let (connection, _) = try await hosts.connect()
        let value = try await connection.raisingSecurity { try await connection.gatt.readValue(handle: handle) }
        #expect(value == Array("level 4".utf8))
        #expect(connection.security.level == 4)
        await hosts.shutdown()
    }
}

/// Our central host and our peripheral host on one virtual link, either of which restarts: a new
/// `LEHost` on the same controller, with the same bond store (the peripheral's in files).
struct RestartableHosts {
    let link: VirtualLink
    let centralController: VirtualController
    let peripheralController: VirtualController
    private(set) var central: LEHost
    private(set) var peripheral: LEHost
    let centralStore: InMemoryBondStore
    let directory: String
    let centralAgent: ScriptedPairingAgent
    let peripheralAgent: ScriptedPairingAgent
    private let peripheralSecurity: SecurityManagerSettings

    static func make(central centralSecurity: SecurityManagerSettings = SecurityManagerSettings(),
                     peripheral peripheralSecurity: SecurityManagerSettings = SecurityManagerSettings()) async throws -> RestartableHosts {
        let link = VirtualLink()
        let centralController = link.addController(name: "central", address: TestAddresses.central)
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bonded-state-\(UUID().uuidString)").path
        let board = PasskeyBoard()
        let centralAgent = ScriptedPairingAgent(board: board, confirms: true)
        let peripheralAgent = ScriptedPairingAgent(board: board, confirms: true)
        let centralStore = InMemoryBondStore()
        let central = try await startHost(centralController, security: centralSecurity, store: centralStore, agent: centralAgent)
        let peripheral = try await startHost(peripheralController, security: peripheralSecurity,
                                             store: FileBondStore(directory: directory, logger: .init(label: "test")), agent: peripheralAgent)
        return RestartableHosts(link: link, centralController: centralController, peripheralController: peripheralController, central: central,
                                peripheral: peripheral, centralStore: centralStore, directory: directory, centralAgent: centralAgent,
                                peripheralAgent: peripheralAgent, peripheralSecurity: peripheralSecurity)
    }

    private static func startHost(_ controller: VirtualController, security: SecurityManagerSettings, store: any BondStore,
                                  agent: ScriptedPairingAgent) async throws -> LEHost {
        var configuration = HostConfiguration()
        configuration.security = security
        configuration.bondStore = store
        let host = LEHost(transport: controller.makeTransport(), configuration: configuration)
        await host.setPairingAgent(agent)
        try await host.powerOn()
        return host
    }

    /// Our peripheral's process ends and starts again: nothing in memory, the bond files stay.
    mutating func restartPeripheral() async throws {
        await peripheral.shutdown()
        peripheral = try await Self.startHost(peripheralController, security: peripheralSecurity,
                                              store: FileBondStore(directory: directory, logger: .init(label: "test")), agent: peripheralAgent)
    }

    /// Our central starts again with other settings, on the same bonds.
    mutating func restartCentral(_ security: SecurityManagerSettings) async throws {
        await central.shutdown()
        central = try await Self.startHost(centralController, security: security, store: centralStore, agent: centralAgent)
    }

    /// The peripheral advertises and the central connects: both ends of the new link.
    func connect() async throws -> (central: Connection, peripheral: Connection) {
        let events = await peripheral.events()
        try await peripheral.startAdvertising(AdvertisingData())
        let connection = try await central.connect(to: DeviceAddress(TestAddresses.peripheral, type: .public), timeout: .seconds(5))
        let incoming = try await withTimeout("the peripheral's connected event") {
            for await event in events { if case let .connected(incoming) = event { return incoming } }
            throw TestTimeout(description: "events ended")
        }
        return (connection, incoming)
    }

    func disconnect(_ connection: Connection, _ incoming: Connection) async throws {
        try await connection.disconnect()
        _ = try await incoming.waitForDisconnection()
    }

    func shutdown() async {
        await central.shutdown()
        await peripheral.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
