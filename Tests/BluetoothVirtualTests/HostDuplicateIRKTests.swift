import BluetoothCore
import BluetoothCrypto
@testable import BluetoothHost
import Testing
import TestSupport

/// A device that bonded with a phone holds the phone's IRK. Pairing with our host under its
/// own identity, it hands that IRK over as its own: the phone's private addresses must still
/// name the phone here, not the device that copied its key.
@Suite("Host: an IRK another bond already has", .timeLimit(.minutes(1)))
struct HostDuplicateIRKTests {
    static let phoneIRK: UInt128 = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210

    @Test func aSecondIdentityDistributingABondedPeersIRKDoesNotTakeItsAddresses() async throws {
        var options = TwoDevices.Options()
        options.central.configure = { $0.identityResolvingKey = Self.phoneIRK }
        let devices = try await TwoDevices(options)
        // The accessory: its own identity address, the phone's IRK.
        let accessory = try await devices.addHost(.init(name: "accessory", address: TestAddresses.third,
                                                        configure: { $0.identityResolvingKey = Self.phoneIRK }))
        let phone = DeviceAddress(TestAddresses.central, type: .public)
        let copier = DeviceAddress(TestAddresses.third, type: .public)

        let (link, _) = try await devices.connect()
        _ = try await devices.central.pair(link, finishedBy: devices.peripheral)
        try await link.disconnect()
        try await devices.peripheral.startAdvertising(AdvertisingData())
        let second = try await accessory.connect(to: await devices.peripheralAddress, timeout: .seconds(5))
        let security = try await accessory.pair(second, finishedBy: devices.peripheral)

        // The accessory's pairing itself succeeds: its keys and identity are its own.
        #expect(security.isEncrypted)
        let bonds = await devices.peripheral.bonds()
        let phoneBond = try #require(bonds.first { $0.peerIdentity == phone }, "the phone's bond")
        let copierBond = try #require(bonds.first { $0.peerIdentity == copier }, "the accessory's bond, under its own identity: \(bonds.map(\.peerIdentity))")
        #expect(phoneBond.peerKeys.identityResolvingKey == Self.phoneIRK)
        #expect(copierBond.peerKeys.identityResolvingKey == nil, "the copied IRK is not kept")
        // Every private address the phone makes resolves to the phone, and only the phone has
        // that IRK here.
        let resolver = devices.peripheral.addressResolver
        #expect(resolver.identity(havingIRK: Self.phoneIRK, besides: copier) == phone)
        #expect(resolver.identity(havingIRK: Self.phoneIRK, besides: phone) == nil)
        for _ in 0..<8 {
            let address = DeviceAddress(BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.phoneIRK)), type: .random)
            #expect(resolver.identity(of: address) == phone)
        }

        await accessory.shutdown()
        await devices.shutdown()
    }
}
