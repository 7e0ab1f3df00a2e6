import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing
import TestSupport

/// A bonded peripheral that advertises from resolvable private addresses, rotating them,
/// keeps one identity at the central: in scan results, in connections, and as the address
/// to connect to.
@Suite("Host: privacy", .timeLimit(.minutes(1)))
struct HostPrivacyTests {
    static let peripheralIRK: UInt128 = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210
    static let identity = DeviceAddress(TestAddresses.peripheral, type: .public)

    /// Makes the peripheral host advertise (connectable) from `address`.
    private func advertise(_ peripheral: LEHost, from address: BluetoothAddress) async throws {
        try await peripheral.stopAdvertising()
        try await peripheral.setRandomAddress(address)
        var parameters = AdvertisingParameters(intervalRange: 0x0030...0x0030)
        parameters.ownAddressType = .random
        try await peripheral.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]), parameters: parameters)
    }

    /// Scans until an advertisement from `address` arrives.
    private func discover(_ central: LEHost, _ address: BluetoothAddress) async throws -> Advertisement {
        let advertisement = try await withTimeout("discovering \(address)") {
            for try await advertisement in try await central.scan() where advertisement.peer.address == address {
                return advertisement
            }
            throw TestTimeout(description: "scan ended")
        }
        await central.stopScanning()
        return advertisement
    }

    @Test func aBondedPeerRotatingItsPrivateAddressKeepsItsIdentity() async throws {
        // The central has a bond with the peripheral's identity and IRK, as pairing leaves it.
        let store = InMemoryBondStore()
        await store.save(Bond(localIdentity: DeviceAddress(TestAddresses.central, type: .public), peerIdentity: Self.identity,
                                  peerKeys: BondKeys(longTermKey: 0x42, identityResolvingKey: Self.peripheralIRK, identityAddress: Self.identity)))
        var options = TwoDevices.Options()
        options.central.bondStore = store
        let devices = try await TwoDevices(options)
        let central = devices.central
        let peripheral = devices.peripheral

        var rng = SystemRandomNumberGenerator()
        var identifiers: [PeripheralIdentifier] = []
        for round in 0..<2 {
            let rpa = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.peripheralIRK, using: &rng))
            try await advertise(peripheral, from: rpa)
            let advertisement = try await discover(central, rpa)
            #expect(advertisement.peer == DeviceAddress(rpa, type: .random), "round \(round)")
            #expect(advertisement.identity == Self.identity, "round \(round)")
            identifiers.append(advertisement.identifier)

            // Connecting to the identity reaches the peer at the private address it uses now.
            let connection = try await central.connect(to: Self.identity, timeout: .seconds(5))
            #expect(connection.peer == DeviceAddress(rpa, type: .random), "SMP takes the address over the air")
            #expect(connection.identity == Self.identity)
            #expect(connection.peerIdentity == Self.identity)
            #expect(await central.bond(for: connection)?.peerIdentity == Self.identity)
            try await connection.disconnect()
        }
        #expect(identifiers.allSatisfy { $0 == PeripheralIdentifier(address: Self.identity) })

        // Once the bond is gone the private address is a stranger again.
        #expect(try await central.removeBond(with: Self.identity))
        let rpa = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.peripheralIRK, using: &rng))
        try await advertise(peripheral, from: rpa)
        let stranger = try await discover(central, rpa)
        #expect(stranger.identity == nil)
        #expect(stranger.identifier == PeripheralIdentifier(address: DeviceAddress(rpa, type: .random)))
        await central.shutdown()
        await peripheral.shutdown()
    }

    /// Pairing with a peer met at a private address: the link learns the identity the peer
    /// distributes, and the IRK distributed with it resolves the peer's next address.
    @Test func bondingAtAPrivateAddressTeachesTheIdentityAndTheIRK() async throws {
        var options = TwoDevices.Options()
        options.peripheral.configure = { $0.identityResolvingKey = Self.peripheralIRK }
        let devices = try await TwoDevices(options)
        let central = devices.central
        let peripheral = devices.peripheral

        var rng = SystemRandomNumberGenerator()
        let first = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.peripheralIRK, using: &rng))
        try await advertise(peripheral, from: first)
        #expect(try await discover(central, first).identity == nil, "no bond yet")
        let connection = try await central.connect(to: DeviceAddress(first, type: .random), timeout: .seconds(5))
        #expect(connection.identity == nil)
        let security = try await central.pair(connection, finishedBy: peripheral)
        #expect(security.isBonded)
        #expect(await peripheral.bonds().count == 1)
        #expect(connection.identity == Self.identity, "the identity the peer distributed")
        #expect(connection.peer == DeviceAddress(first, type: .random))
        try await connection.disconnect()

        let second = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.peripheralIRK, using: &rng))
        try await advertise(peripheral, from: second)
        #expect(try await discover(central, second).identity == Self.identity)
        let again = try await central.connect(to: Self.identity, timeout: .seconds(5))
        #expect(again.peer == DeviceAddress(second, type: .random))
        #expect(try await central.secure(again, allowPairing: false).isEncrypted, "the bond is found through the identity")
        try await again.disconnect()
        await central.shutdown()
        await peripheral.shutdown()
    }

    /// A private address of a stranger costs one `ah` per bond however often it is heard.
    @Test func anUnbondedPrivateAddressIsResolvedOnce() async throws {
        let store = InMemoryBondStore()
        for index in 0..<200 as Range<UInt64> {
            let peer = DeviceAddress(BluetoothAddress(rawValue: 0xD000_0000_0000 | index), type: .random)
            await store.save(Bond(localIdentity: DeviceAddress(TestAddresses.central, type: .public), peerIdentity: peer,
                                      peerKeys: BondKeys(identityResolvingKey: UInt128(index + 1), identityAddress: peer)))
        }
        var setup = TwoDevices.Options()
        setup.central.bondStore = store
        let devices = try await TwoDevices(setup)
        let central = devices.central
        let peripheral = devices.peripheral
        let rpa = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.peripheralIRK))
        try await advertise(peripheral, from: rpa)
        let options = ScanOptions(filterDuplicates: false)
        let heard = try await withTimeout("hearing the stranger ten times") {
            var heard = 0
            for try await advertisement in try await central.scan(options) where advertisement.peer.address == rpa {
                #expect(advertisement.identity == nil)
                heard += 1
                if heard == 10 { return heard }
            }
            throw TestTimeout(description: "scan ended")
        }
        await central.stopScanning()
        #expect(heard == 10)
        #expect(central.addressResolver.evaluations == 200)
        await central.shutdown()
        await peripheral.shutdown()
    }
}
