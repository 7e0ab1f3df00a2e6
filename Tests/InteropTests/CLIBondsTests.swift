import BluetoothCore
import BluetoothHost
import Foundation
import Testing

extension InteropSuites {
    /// `bluejay bonds --remove` on a bond directory written by the stack's own stores (no
    /// controller needed): the peer's bond and its cached GATT database go, the others stay.
    @Suite("bluejay bonds --remove")
    struct CLIBondsTests {
        static let local = DeviceAddress(BluetoothAddress(rawValue: 0xC0FF_EE00_0001), type: .random)
        static let removed = DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_01), type: .public)
        static let kept = DeviceAddress(BluetoothAddress(rawValue: 0xD0_0000_0000_02), type: .random)

        @Test("removing a bond also removes that peer's cached GATT database")
        func removeTakesTheCachedDatabase() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bonds-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = FileBondStore(directory: directory, logger: .init(label: "test"))
            let cache = FileGATTDatabaseCache(directory: FileGATTDatabaseCache.defaultDirectory(bondDirectory: directory), logger: .init(label: "test"))
            for peer in [Self.removed, Self.kept] {
                try await store.save(Bond(localIdentity: Self.local, peerIdentity: peer, peerKeys: BondKeys(longTermKey: 1)))
                await cache.save(GATTCachedDatabase(peer: peer, hash: nil, services: []))
            }
            #expect(await cache.fileNames().count == 2)

            let result = try await bluejay("bonds", "--bond-directory", directory, "--remove", Self.removed.address.description)
            #expect(result.status == 0, "\(result)")
            #expect(await store.bonds().map(\.peerIdentity) == [Self.kept])
            #expect(await cache.database(for: Self.removed) == nil)
            #expect(await cache.database(for: Self.kept)?.peer == Self.kept)
            #expect(await cache.fileNames().count == 1)
        }
    }
}
