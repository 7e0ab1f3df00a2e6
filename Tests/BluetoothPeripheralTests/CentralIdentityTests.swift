import BluetoothCore
import BluetoothCrypto
import BluetoothHost
import BluetoothPeripheral
import Synchronization
import Testing

/// `Central.address` is a central's identity once the host knows it: a central that connects
/// from a resolvable private address is named by it until pairing reveals its identity, then
/// by its identity in every event, request and list, told by `.identityResolved`.
@Suite("A central's identity on the peripheral side", .timeLimit(.minutes(1)))
struct CentralIdentityTests {
    static let service = BluetoothUUID("6E400701-B5A3-F393-E0A9-E50E24DCCA9E")
    static let value = BluetoothUUID("6E400702-B5A3-F393-E0A9-E50E24DCCA9E")
    static let centralIRK: UInt128 = 0x1234_5678_9ABC_DEF0_0FED_CBA9_8765_4321

    @Test func aPrivateCentralIsKnownByItsIdentityOncePairingRevealsIt() async throws {
        var centralConfiguration = HostConfiguration()
        centralConfiguration.identityResolvingKey = Self.centralIRK
        centralConfiguration.privacy = PrivacySettings(mode: .device)
        let pair = try await VirtualPair(centralConfiguration: centralConfiguration)
        let published = try await pair.manager.add(PeripheralService(uuid: Self.service, characteristics: [
            PeripheralCharacteristic(uuid: Self.value, properties: [.read, .write, .notify], value: [0]),
        ]))
        let characteristic = try #require(published.characteristic(Self.value))
        let readers = Mutex<[Central]>([])
        await pair.manager.setReadHandler(for: characteristic) { request in
            readers.withLock { $0.append(request.central) }
            return .value([7])
        }
        var events = await pair.manager.connectionEvents().makeAsyncIterator()
        try await pair.manager.startAdvertising(name: "Identity")
        let connection = try await pair.connect()
        guard case let .connected(atPrivateAddress)? = await events.next() else {
            Issue.record("no connection event")
            return
        }
        let privateAddress = try #require(atPrivateAddress.address)
        #expect(privateAddress.type == .random && ResolvablePrivateAddress.resolves(privateAddress.address.rawValue, irk: Self.centralIRK),
                "the central connected from a resolvable private address: \(privateAddress)")
        let remote = try await connection.gatt.characteristic(Self.value, inService: Self.service)
        #expect(try await connection.gatt.read(remote) == [7])
        #expect(readers.withLock { $0 } == [atPrivateAddress], "before pairing: the address over the air")

        _ = try await pair.central.pair(connection)
        let identity = try #require(await pair.central.identityAddress)
        guard case let .identityResolved(known)? = await events.next() else {
            Issue.record("no identityResolved event")
            return
        }
        #expect(known == Central(connectionHandle: atPrivateAddress.connectionHandle, address: identity))
        #expect(try await connection.gatt.read(remote) == [7])
        #expect(readers.withLock { $0.last } == known, "a request after pairing names the identity")
        _ = try await connection.gatt.subscribe(to: remote)
        #expect(await eventually { await pair.manager.subscribers(of: characteristic) == [known] })
        #expect(try await pair.manager.updateValue([8], for: characteristic).delivered == [known])
        try await connection.disconnect()
        guard case let .disconnected(gone, _)? = await events.next() else {
            Issue.record("no disconnection event")
            return
        }
        #expect(gone == known)
        await pair.shutdown()
    }
}
