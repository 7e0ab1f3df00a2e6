import BluetoothCore
import BluetoothCrypto
@testable import BluetoothHost
@testable import BluetoothVirtual
import Foundation
import Logging
import Testing

/// Looking up the bond of a private address that no IRK resolves (a stranger's Signed Write
/// Commands, say) reads no bond file and runs no AES once the answer is known; a bond another
/// process adds is still found.
@Suite("Host: bond lookups by private address", .timeLimit(.minutes(2)))
struct BondLookupCostTests {
    static let local = DeviceAddress(TestAddresses.central, type: .public)

    final class Scratch: Sendable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-lookup-\(UUID().uuidString)").path
        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func peer(_ index: Int) -> DeviceAddress {
        DeviceAddress(BluetoothAddress(rawValue: 0xD000_0000_0000 | UInt64(index)), type: .random)
    }

    static func bond(_ index: Int) -> Bond {
        Bond(localIdentity: local, peerIdentity: peer(index), keySize: 16,
             peerKeys: BondKeys(longTermKey: UInt128(index), identityResolvingKey: UInt128(index + 1), identityAddress: peer(index)),
             localKeys: BondKeys(longTermKey: UInt128(index)))
    }

    /// A host on a virtual controller, powered on, whose bonds are `count` files in `scratch`.
    static func host(bonds count: Int, in scratch: Scratch) async throws -> (LEHost, FileBondStore) {
        let writer = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.writer"))
        for index in 0..<count { try await writer.save(bond(index)) }
        let store = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.bonds"))
        let link = VirtualLink()
        let controller = link.addController(name: "central", address: TestAddresses.central)
        var configuration = HostConfiguration()
        configuration.bondStore = store
        let host = LEHost(transport: controller.makeTransport(), configuration: configuration)
        try await host.powerOn()
        return (host, store)
    }

    static func privateAddress(irk: UInt128) -> DeviceAddress {
        DeviceAddress(BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: irk)), type: .random)
    }

    @Test func aStrangersPrivateAddressCostsNoFileReadAndNoAESAfterTheFirstLookup() async throws {
        let scratch = Scratch()
        let (host, store) = try await Self.host(bonds: 50, in: scratch)
        let stranger = Self.privateAddress(irk: 0xFFFF_FFFF)
        #expect(await host.bond(forAddress: stranger) == nil)
        let reads = await store.fileReads
        let evaluations = host.addressResolver.evaluations
        for _ in 0..<100 { #expect(await host.bond(forAddress: stranger) == nil) }
        #expect(await store.fileReads == reads, "no bond file read again")
        #expect(host.addressResolver.evaluations == evaluations, "the stranger's address is resolved once")

        // A bonded peer at a private address is still found.
        #expect(await host.bond(forAddress: Self.privateAddress(irk: UInt128(8)))?.peerIdentity == Self.peer(7))
        // So is one another process bonded with while the host runs.
        let other = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.other"))
        try await other.save(Self.bond(500))
        #expect(await host.bond(forAddress: Self.privateAddress(irk: UInt128(501)))?.peerIdentity == Self.peer(500))
        // And one it removed is gone.
        #expect(try await other.removeBond(local: Self.local, peer: Self.peer(7)))
        #expect(await host.bond(forAddress: Self.privateAddress(irk: UInt128(8))) == nil)
        await host.shutdown()
    }

    /// Prints lookups per second of one stranger's private address with N bond files (the
    /// cost a stream of Signed Write Commands from it puts on the host), and checks that
    /// more bonds do not make it slower per lookup by more than the noise of a busy machine.
    @Test func resolutionsPerSecond() async throws {
        var rates: [(Int, Double)] = []
        for count in [10, 100, 1000] {
            let scratch = Scratch()
            let (host, _) = try await Self.host(bonds: count, in: scratch)
            let stranger = Self.privateAddress(irk: 0xFFFF_FFFF)
            _ = await host.bond(forAddress: stranger)
            let lookups = 2000
            let clock = ContinuousClock()
            // The best of three runs: a busy machine only ever slows a run down (a pause of the
            // test's thread in one run of the last count would otherwise look like a cost).
            var best = 0.0
            for _ in 0..<3 {
                let start = clock.now
                for _ in 0..<lookups { _ = await host.bond(forAddress: stranger) }
                best = max(best, Double(lookups) / ((clock.now - start) / .seconds(1)))
            }
            rates.append((count, best))
            await host.shutdown()
        }
        print("bond lookups of an unresolvable private address per second, by bond files: "
              + rates.map { "\($0.0): \(Int($0.1))/s" }.joined(separator: ", "))
        // Reading every file per lookup made the rate fall with the count (about 100x from 10
        // to 1000 files); with the bonds in memory it does not depend on it.
        if let first = rates.first?.1, let last = rates.last?.1 { #expect(last > first / 10, "\(rates)") }
    }
}
