@testable import Bluejay
import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
import BluetoothHost
import BluetoothVirtual
import Foundation
import Testing

/// A bonded peripheral advertising from rotating resolvable private addresses has one
/// `PeripheralIdentifier`, its identity, in scan discoveries and connections.
@Suite("Bluejay: a bonded peer's identity", .timeLimit(.minutes(1)))
struct PrivacyIdentifierTests {
    static let irk: UInt128 = 0x0F1E_2D3C_4B5A_6978_8796_A5B4_C3D2_E1F0

    /// Makes the peripheral advertise from a new resolvable private address; returns it.
    private func rotate(_ peripheral: VirtualPeripheral) async throws -> BluetoothAddress {
        try await peripheral.host.stopAdvertising()
        let rpa = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.irk))
        try await peripheral.host.setRandomAddress(rpa)
        var parameters = AdvertisingParameters(intervalRange: 0x0030...0x0030)
        parameters.ownAddressType = .random
        try await peripheral.host.startAdvertising(
            AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), .serviceUUIDs16([0x180D], complete: true)]),
            scanResponse: AdvertisingData([.completeLocalName(peripheral.name)]), parameters: parameters)
        return rpa
    }

    @Test func scanDiscoveriesAndConnectionsCarryTheIdentity() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Private", address: "D0:00:00:00:00:31")
        let identity = DeviceAddress(peripheral.controller.address, type: .public)
        let centralAddress = DeviceAddress(try #require(BluetoothAddress("C0:00:00:00:00:31")), type: .public)
        var configuration = HostConfiguration()
        let store = InMemoryBondStore()
        await store.save(Bond(localIdentity: centralAddress, peerIdentity: identity,
                                  peerKeys: BondKeys(longTermKey: 0x42, identityResolvingKey: Self.irk, identityAddress: identity)))
        configuration.bondStore = store
        let controller = link.addController(name: "central", address: centralAddress.address)
        let central = try await BluejayCentral.open(.transport(controller.makeTransport()), configuration: configuration, operationTimeout: .seconds(30))

        for _ in 0..<2 {
            let rpa = try await rotate(peripheral)
            var discovery: ScanDiscovery?
            for try await event in central.scan(allowDuplicates: true, serviceIdentifiers: [HeartRate.service]) {
                if case let .discovered(found) = event, found.advertisement.peer.address == rpa {
                    discovery = found
                    break
                }
            }
            let found = try #require(discovery)
            #expect(found.peripheralIdentifier == PeripheralIdentifier(address: identity))
            let remote = try await central.connect(found.peripheralIdentifier, timeout: .seconds(10))
            #expect(remote.identifier == PeripheralIdentifier(address: identity))
            try await remote.disconnect()
        }
        await central.shutdown()
        await peripheral.shutdown()
    }

    /// A peripheral first reached at a resolvable private address becomes its identity when
    /// pairing reveals it: the event says so, ``Bluejay/connectedPeripheral`` follows, and the
    /// listen started before pairing and the operations queued around it go on.
    @Test func aPeripheralReachedAtAPrivateAddressBecomesItsIdentityWhenItPairs() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Private", address: "D0:00:00:00:00:32", identityResolvingKey: Self.irk)
        let identity = PeripheralIdentifier(address: DeviceAddress(peripheral.controller.address, type: .public))
        let rpa = try await rotate(peripheral)
        let atPrivateAddress = PeripheralIdentifier(address: DeviceAddress(rpa, type: .random))
        let bluejay = try await startBluejay(on: link)
        let events = bluejay.connectionEvents()
        #expect(try await bluejay.connect(atPrivateAddress, timeout: .seconds(10)) == atPrivateAddress)
        let measurements: ValueStream<Data> = try await bluejay.listen(to: HeartRate.measurement)
        var values = measurements.makeAsyncIterator()
        try await peripheral.notify(0x2A37, [1])
        #expect(try await values.next() == Data([1]))

        let queued = Task { () throws(BluejayError) -> UInt8 in try await bluejay.read(from: HeartRate.bodySensorLocation) }
        _ = try await bluejay.pair()
        let resolved = try await withTimeout("the identityResolved event", .seconds(10)) { () -> ConnectionEvent? in
            for await event in events {
                if case .identityResolved = event { return event }
            }
            return nil
        }
        #expect(resolved == .identityResolved(previous: atPrivateAddress, identity: identity))
        #expect(bluejay.connectedPeripheral == identity)
        #expect(bluejay.peripheralState == .connected(identity))
        #expect(try await queued.value == 1)
        try await peripheral.notify(0x2A37, [2])
        #expect(try await values.next() == Data([2]), "the listen goes on")
        #expect(try await bluejay.read(from: HeartRate.bodySensorLocation) as UInt8 == 1)
        await bluejay.stop()
        await peripheral.shutdown()
    }

    /// The `async` API's ``RemotePeripheral`` follows the same way.
    @Test func aRemotePeripheralReachedAtAPrivateAddressBecomesItsIdentityWhenItPairs() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Private", address: "D0:00:00:00:00:33", identityResolvingKey: Self.irk)
        let identity = PeripheralIdentifier(address: DeviceAddress(peripheral.controller.address, type: .public))
        let rpa = try await rotate(peripheral)
        let atPrivateAddress = PeripheralIdentifier(address: DeviceAddress(rpa, type: .random))
        let controller = link.addController(name: "central", address: try #require(BluetoothAddress("C0:00:00:00:00:33")))
        let central = try await BluejayCentral.open(.transport(controller.makeTransport()), operationTimeout: .seconds(30))
        let remote = try await central.connect(atPrivateAddress, timeout: .seconds(10))
        #expect(remote.identifier == atPrivateAddress)
        _ = try await remote.pair()
        #expect(remote.identifier == identity)
        try await remote.disconnect()
        await central.shutdown()
        await peripheral.shutdown()
    }
}
