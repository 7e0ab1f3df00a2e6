import BluetoothCore
@testable import BluetoothHost
import Foundation
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where cached databases are kept: bounded in memory; on disk private, bounded, and never
/// trusted when read back.
@Suite("GATT database caches", .timeLimit(.minutes(1)))
struct GATTDatabaseCacheTests {
    static let peer = DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_01), type: .random)
    static let otherPeer = DeviceAddress(BluetoothAddress(rawValue: 0x00_1122_3344_55), type: .public)

    static func database(peer: DeviceAddress = peer, hash: UInt8? = 7) -> GATTCachedDatabase {
        let service = GATTService(uuid: "180F", handleRange: 0x000E...0x0011)
        let level = GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], declarationHandle: 0x000F, valueHandle: 0x0010, endHandle: 0x0011)
        return GATTCachedDatabase(peer: peer, hash: hash.flatMap { GATTDatabaseHash(bytes: [UInt8](repeating: $0, count: 16)) }, services: [
            GATTDiscoveredService(service: service, characteristics: [
                GATTDiscoveredCharacteristic(characteristic: level, descriptors: [GATTDescriptor(uuid: "2902", handle: 0x0011)]),
            ]),
        ])
    }

    final class Scratch: Sendable {
        let root: String
        let cache: FileGATTDatabaseCache

        init(capacity: Int = 256) {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-gatt-cache-\(UUID().uuidString)").path
            cache = FileGATTDatabaseCache(directory: FileGATTDatabaseCache.defaultDirectory(bondDirectory: root + "/bonds"),
                                          capacity: capacity, logger: Logger(label: "test.gatt-cache"))
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: cache.directory)) ?? []).sorted() }

        func plant(_ name: String, _ bytes: [UInt8]) throws {
            try FileManager.default.createDirectory(atPath: cache.directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: cache.directory + "/" + name))
        }
    }

    @Test("In memory: kept by identity (any random subtype), bounded, removable")
    func inMemory() async {
        let cache = InMemoryGATTDatabaseCache(capacity: 2)
        await cache.save(Self.database())
        #expect(await cache.database(for: DeviceAddress(Self.peer.address, type: .randomIdentity)) == Self.database())
        await cache.save(Self.database(peer: Self.otherPeer))
        let third = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_03), type: .random)
        await cache.save(Self.database(peer: third))
        #expect(await cache.database(for: Self.peer) == nil, "the oldest went")
        #expect(await cache.peers == [Self.otherPeer, third])
        await cache.removeDatabase(for: third)
        #expect(await cache.database(for: third) == nil)
    }

    @Test("On disk: written 0600 in a 0700 directory beside the bonds, read back, removed")
    func onDisk() async throws {
        let scratch = Scratch()
        await scratch.cache.save(Self.database())
        #expect(scratch.cache.directory.hasSuffix("/bonds/gatt-cache"))
        #expect(scratch.files == ["f00000000001-random.json"])
        var status = stat()
        #expect(stat(scratch.cache.directory + "/f00000000001-random.json", &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(stat(scratch.cache.directory, &status) == 0 && status.st_mode & 0o777 == 0o700)
        #expect(await scratch.cache.database(for: Self.peer) == Self.database())
        let again = FileGATTDatabaseCache(directory: scratch.cache.directory, logger: Logger(label: "test"))
        #expect(await again.database(for: Self.peer) == Self.database(), "another run reads it")
        await scratch.cache.removeDatabase(for: Self.peer)
        #expect(await scratch.cache.database(for: Self.peer) == nil)
        #expect(scratch.files.isEmpty)
    }

    @Test("A corrupt file, or one holding another peer's database, is set aside and the peer discovered again")
    func corruptFiles() async throws {
        let scratch = Scratch()
        try scratch.plant("f00000000001-random.json", Array("{\"peer\": 3".utf8))
        #expect(await scratch.cache.database(for: Self.peer) == nil)
        #expect(scratch.files.count == 1 && scratch.files[0].hasPrefix("f00000000001-random.json.corrupt-"))

        let other = try JSONEncoder().encode(Self.database(peer: Self.otherPeer))
        try scratch.plant("f00000000001-random.json", Array(other))
        #expect(await scratch.cache.database(for: Self.peer) == nil)
        #expect(!scratch.files.contains("f00000000001-random.json"))

        // A hash of the wrong length is not a cached database.
        let encoded = String(decoding: try JSONEncoder().encode(Self.database()), as: UTF8.self)
        let shortHash = encoded.replacingOccurrences(of: "[" + Array(repeating: "7", count: 16).joined(separator: ",") + "]", with: "[7,7]")
        #expect(shortHash != encoded)
        try scratch.plant("f00000000001-random.json", Array(shortHash.utf8))
        #expect(await scratch.cache.database(for: Self.peer) == nil)
        #expect(!scratch.files.contains("f00000000001-random.json"))

        try scratch.plant("f00000000001-random.json", [UInt8](repeating: 0x20, count: FileGATTDatabaseCache.maximumFileSize + 1))
        #expect(await scratch.cache.database(for: Self.peer) == nil)
        #expect(!scratch.files.contains("f00000000001-random.json"))
        await scratch.cache.save(Self.database())
        #expect(await scratch.cache.database(for: Self.peer) == Self.database(), "a new database replaces what was set aside")
    }

    @Test("On disk: at most capacity files, the least recently written going first")
    func bounded() async throws {
        let scratch = Scratch(capacity: 2)
        let peers = (1...3).map { DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_00 + UInt64($0)), type: .random) }
        for peer in peers {
            await scratch.cache.save(Self.database(peer: peer))
            // Modification times one second apart at least on coarse file systems.
            let path = scratch.cache.directory + "/" + FileGATTDatabaseCache.fileName(peer)
            let age = Date(timeIntervalSinceNow: Double(peer.address.rawValue & 0xFF) * 10 - 100)
            try FileManager.default.setAttributes([.modificationDate: age], ofItemAtPath: path)
        }
        #expect(scratch.files.count == 2)
        #expect(await scratch.cache.database(for: peers[0]) == nil)
        #expect(await scratch.cache.database(for: peers[2]) != nil)
    }
}
