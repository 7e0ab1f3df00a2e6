import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Foundation
import Testing
import TestSupport

/// Signed writes between two of our hosts on the virtual controller, with the bond store's
/// CSRKs and SignCounters (Core 6.0, Vol 3, Part H, 2.4.5; Part G, 4.9.2). Bumble 0.0.236
/// neither signs nor checks signed writes, so both roles are tested here.
@Suite("Signed writes between hosts", .timeLimit(.minutes(1)))
struct SignedWriteTests {
    static let service = BluetoothUUID(UInt16(0xAD00))
    static let signed = BluetoothUUID(UInt16(0xAD01))
    static let local = DeviceAddress(.zero, type: .public)
    static let peer = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_42), type: .public)

    static var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: signed, properties: [.read, .authenticatedSignedWrites], value: [0x00]),
        ])
    }

    /// A host that is never powered on: its local identity is the zero address.
    static func idleHost(store: any BondStore) -> LEHost {
        let link = VirtualLink()
        var configuration = HostConfiguration()
        configuration.bondStore = store
        return LEHost(transport: link.addController(name: "idle", address: TestAddresses.third).makeTransport(), configuration: configuration)
    }

    static func bond(localCSRK: UInt128? = 0x1111, peerCSRK: UInt128? = 0x2222) -> Bond {
        Bond(localIdentity: local, peerIdentity: peer, keySize: 16,
             peerKeys: BondKeys(longTermKey: 1, signatureKey: peerCSRK), localKeys: BondKeys(signatureKey: localCSRK))
    }

    /// The server's value, polled (a command has no answer to wait for).
    static func waitForValue(_ value: [UInt8], at handle: UInt16, on server: GATTServer) async throws {
        try await waitUntil("value \(value) is stored at \(handle)") { await server.value(forHandle: handle) == value }
    }

    @Test("The signer takes each SignCounter once, stores the next before it returns, and keeps on after a restart")
    func signerCounts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signing-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = FileBondStore(directory: directory, logger: .init(label: "test"))
        try await store.save(Self.bond())
        let host = Self.idleHost(store: store)
        #expect(try await host.reserveSignedWrite(to: Self.peer) == SignedWriteKey(key: 0x1111, signCounter: 0))
        #expect(try await host.reserveSignedWrite(to: Self.peer) == SignedWriteKey(key: 0x1111, signCounter: 1))
        #expect(await store.bond(local: Self.local, peer: Self.peer)?.localKeys.signCounter == 2)

        // Another run on the same store goes on from there.
        let again = Self.idleHost(store: FileBondStore(directory: directory, logger: .init(label: "test")))
        #expect(try await again.reserveSignedWrite(to: Self.peer).signCounter == 2)

        // Concurrent writes never share a counter.
        let counters = try await withThrowingTaskGroup(of: UInt32.self) { group in
            for _ in 0..<8 { group.addTask { try await again.reserveSignedWrite(to: Self.peer).signCounter } }
            return try await group.reduce(into: [UInt32]()) { $0.append($1) }
        }
        #expect(Set(counters) == Set(3...10))

        // No bond, or a bond without a CSRK of ours: refused.
        let stranger = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_99), type: .public)
        await #expect(throws: HostError.self) { try await again.reserveSignedWrite(to: stranger) }
        let noKey = Self.idleHost(store: InMemoryBondStore(bonds: [Self.bond(localCSRK: nil)]))
        await #expect(throws: HostError.self) { try await noKey.reserveSignedWrite(to: Self.peer) }
    }

    @Test("The verifier checks the peer's CSRK, refuses replayed and older counters, and stores the next")
    func verifierChecks() async throws {
        let store = InMemoryBondStore(bonds: [Self.bond()])
        let host = Self.idleHost(store: store)
        func write(_ value: [UInt8], counter: UInt32, key: UInt128 = 0x2222) -> ATTSignedWriteCommand {
            ATTSignedWriteCommand(handle: 0x0010, value: value, signedWith: SignedWriteKey(key: key, signCounter: counter))
        }
        let accepted = SignedWriteVerdict.accepted(security: LinkSecurity(isEncrypted: true, keySize: 16, isBonded: true))
        #expect(await host.verifySignedWrite(write([1], counter: 0), from: Self.peer) == accepted)
        #expect(await host.verifySignedWrite(write([1], counter: 0), from: Self.peer) == .staleCounter(received: 0, lowestAccepted: 1))
        #expect(await host.verifySignedWrite(write([2], counter: 5), from: Self.peer) == accepted)
        #expect(await host.verifySignedWrite(write([3], counter: 4), from: Self.peer) == .staleCounter(received: 4, lowestAccepted: 6))
        #expect(await host.verifySignedWrite(write([4], counter: 6, key: 0x1111), from: Self.peer) == .badSignature,
                "signed with our own CSRK, not the peer's")
        #expect(await host.verifySignedWrite(write([5], counter: UInt32.max), from: Self.peer) == .staleCounter(received: .max, lowestAccepted: 6))
        #expect(await store.bond(local: Self.local, peer: Self.peer)?.peerKeys.signCounter == 6)
        let stranger = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_99), type: .public)
        #expect(await host.verifySignedWrite(write([6], counter: 9), from: stranger) == .noKey)
        let noKey = Self.idleHost(store: InMemoryBondStore(bonds: [Self.bond(peerCSRK: nil)]))
        #expect(await noKey.verifySignedWrite(write([7], counter: 9), from: Self.peer) == .noKey)
    }

    @Test("Bonded hosts write signed both ways on a link that is not encrypted")
    func bothRoles() async throws {
        let centralStore: any BondStore = InMemoryBondStore()
        let peripheralStore: any BondStore = InMemoryBondStore()
        var options = TwoDevices.Options()
        options.central.bondStore = centralStore
        options.peripheral.bondStore = peripheralStore
        let devices = try await TwoDevices(options)
        let central = devices.central
        let peripheral = devices.peripheral
        let onPeripheral = try await peripheral.server.addService(Self.definition)
        let onCentral = try await central.server.addService(Self.definition)
        let peripheralAddress = DeviceAddress(TestAddresses.peripheral, type: .public)
        let centralAddress = DeviceAddress(TestAddresses.central, type: .public)

        func connect() async throws -> (Connection, Connection) { try await devices.connect() }

        // Bond (Just Works, both sides distribute a CSRK), then reconnect without encrypting.
        var (connection, incoming) = try await connect()
        // The peripheral is done once it has the central's keys, which come last.
        _ = try await central.pair(connection, finishedBy: peripheral)
        #expect(await peripheral.bonds().count == 1, "bonds() waits for the bond's save")
        try await connection.disconnect()
        _ = try await incoming.waitForDisconnection()
        (connection, incoming) = try await connect()
        #expect(!connection.gatt.bearer.security.isEncrypted && !incoming.gatt.bearer.security.isEncrypted)

        // Central to peripheral.
        let service = try #require(try await connection.gatt.discoverPrimaryServices(uuid: Self.service).first)
        let characteristic = try #require(try await connection.gatt.discoverCharacteristics(of: service, uuid: Self.signed).first)
        try await connection.gatt.writeSigned([0xC1], to: characteristic)
        try await connection.gatt.writeSigned([0xC2], to: characteristic)
        let peripheralValue = try #require(onPeripheral.characteristic(Self.signed)).valueHandle
        try await Self.waitForValue([0xC2], at: peripheralValue, on: peripheral.server)
        #expect(await centralStore.bond(local: centralAddress, peer: peripheralAddress)?.localKeys.signCounter == 2)
        #expect(await peripheralStore.bond(local: peripheralAddress, peer: centralAddress)?.peerKeys.signCounter == 2)

        // Peripheral to central: the peripheral's client on the same link.
        let reverseService = try #require(try await incoming.gatt.discoverPrimaryServices(uuid: Self.service).first)
        let reverse = try #require(try await incoming.gatt.discoverCharacteristics(of: reverseService, uuid: Self.signed).first)
        try await incoming.gatt.writeSigned([0xE1], to: reverse)
        let centralValue = try #require(onCentral.characteristic(Self.signed)).valueHandle
        try await Self.waitForValue([0xE1], at: centralValue, on: central.server)
        #expect(await peripheralStore.bond(local: peripheralAddress, peer: centralAddress)?.localKeys.signCounter == 1)
        #expect(await central.server.rejectedSignedWriteCount == 0)
        #expect(await peripheral.server.rejectedSignedWriteCount == 0)

        try await connection.disconnect()
        await central.shutdown()
        await peripheral.shutdown()
    }
}
