@testable import Bluejay
import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
import BluetoothHost
import BluetoothVirtual
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
        let central = try await BluejayCentral.open(.transport(controller.makeTransport()), configuration: configuration, operationTimeout: .seconds(5))

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
}
