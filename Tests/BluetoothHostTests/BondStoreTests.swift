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

/// Bonds kept on disk are private, written atomically and never trusted when read back;
/// bonds in memory follow the same rules of identity.
@Suite("Bond stores", .timeLimit(.minutes(1)))
struct BondStoreTests {
    /// A fresh directory under the temporary directory, removed at the end of the test.
    final class Scratch: Sendable {
        let root: String
        let directory: String
        let store: FileBondStore

        init() {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bonds-\(UUID().uuidString)").path
            directory = FileBondStore.defaultDirectory(stateDirectory: root + "/state")
            store = FileBondStore(directory: directory, logger: Logger(label: "test.bonds"))
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        func path(_ name: String) -> String { directory + "/" + name }

        /// The file names in the directory.
        var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() }

        func plant(_ name: String, _ bytes: [UInt8]) throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
        }
    }

    static let local = DeviceAddress(BluetoothAddress(rawValue: 0xC0FF_EE00_0001), type: .random)
    static let otherLocal = DeviceAddress(BluetoothAddress(rawValue: 0x0011_2233_4455), type: .public)
    static let peer = DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_01), type: .public)
    static let otherPeer = DeviceAddress(BluetoothAddress(rawValue: 0xD0_0000_0000_02), type: .random)

    static func bond(local: DeviceAddress = local, peer: DeviceAddress = peer, ltk: UInt128 = 0x0011_2233_4455_6677_8899_AABB_CCDD_EEFF) -> Bond {
        Bond(localIdentity: local, peerIdentity: peer, keySize: 16, isAuthenticated: true, isSecureConnections: false,
             peerKeys: BondKeys(longTermKey: ltk, ediv: 0xBEEF, rand: 0xFEDC_BA98_7654_3210, identityResolvingKey: .max,
                                identityAddress: peer, signatureKey: 1, signCounter: 41),
             localKeys: BondKeys(longTermKey: ~ltk, ediv: 0x1234, rand: .max, identityResolvingKey: 0x5A,
                                 identityAddress: local, signatureKey: nil, signCounter: 7),
             createdAt: 1_764_000_000)
    }

    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    static func fileName(local: DeviceAddress = local, peer: DeviceAddress = peer) -> String {
        FileBondStore.fileName(BondIdentities(local: local, peer: peer))
    }

    // MARK: Encoding

    @Test("Keys are encoded as 32 hexadecimal digits and Rand as 16, most significant first, and decode to the same bond")
    func hexKeys() throws {
        let bond = Self.bond()
        let data = try JSONEncoder().encode(bond)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"00112233445566778899aabbccddeeff\""), "\(text)")
        #expect(text.contains("\"ffffffffffffffffffffffffffffffff\""), "the IRK 2^128 - 1 exactly")
        #expect(text.contains("\"fedcba9876543210\""), "Rand as text, not a number a JSON reader may round")
        #expect(text.contains("\"ffffffffffffffff\""))
        #expect(try JSONDecoder().decode(Bond.self, from: data) == bond)
    }

    @Test("A key that is not 32 hexadecimal digits does not decode")
    func malformedKey() throws {
        for key in ["\"0011\"", "\"zz112233445566778899aabbccddeeff\"", "17", "\"00112233445566778899aabbccddeeff00\""] {
            let json = "{\"longTermKey\": \(key), \"ediv\": 0, \"rand\": \"0000000000000000\", \"signCounter\": 0}"
            #expect(throws: DecodingError.self, "\(key)") { try JSONDecoder().decode(BondKeys.self, from: Data(json.utf8)) }
        }
    }

    // MARK: File store

    @Test("Save, load, list and remove round-trip through the directory")
    func roundTrip() async throws {
        let scratch = Scratch()
        let store = scratch.store
        #expect(await store.bonds().isEmpty, "no directory yet: no bonds, no error")
        #expect(await store.bond(local: Self.local, peer: Self.peer) == nil)
        let first = Self.bond()
        let second = Self.bond(peer: Self.otherPeer, ltk: 5)
        try await store.save(first)
        try await store.save(second)
        #expect(await store.bond(local: Self.local, peer: Self.peer) == first)
        // A resolved identity type finds the bond of its base type.
        #expect(await store.bond(local: Self.local, peer: DeviceAddress(Self.peer.address, type: .publicIdentity)) == first)
        #expect(Set(await store.bonds()) == [first, second])
        #expect(scratch.files == [Self.fileName(), Self.fileName(peer: Self.otherPeer)].sorted())

        var replaced = first
        replaced.peerKeys.signCounter = 42
        try await store.save(replaced)
        #expect(await store.bond(local: Self.local, peer: Self.peer) == replaced)
        #expect(scratch.files.count == 2, "replaced in place, nothing left beside it")

        #expect(try await store.removeBond(local: Self.local, peer: Self.peer))
        #expect(try await store.removeBond(local: Self.local, peer: Self.peer) == false)
        #expect(await store.bond(local: Self.local, peer: Self.peer) == nil)
        #expect(await store.bonds() == [second])
        #expect(scratch.files == [Self.fileName(peer: Self.otherPeer)])

        // A new store on the same directory (the next run) finds what was kept.
        let again = FileBondStore(directory: scratch.directory, logger: Logger(label: "test"))
        #expect(await again.bonds() == [second])
    }

    @Test("The directory is made 0700 (its missing parents too) and each file 0600")
    func permissions() async throws {
        let scratch = Scratch()
        try await scratch.store.save(Self.bond())
        #expect(scratch.directory == scratch.root + "/state/bonds")
        #expect(Self.mode(scratch.directory) == 0o700)
        #expect(Self.mode(scratch.root + "/state") == 0o700)
        #expect(Self.mode(scratch.path(Self.fileName())) == 0o600)
    }

    @Test("An existing directory open to others is made 0700 before a key is written in it")
    func tightensDirectory() async throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.directory, withIntermediateDirectories: true)
        #expect(chmod(scratch.directory, 0o777) == 0)
        try await scratch.store.save(Self.bond())
        #expect(Self.mode(scratch.directory) == 0o700)
    }

    @Test("A temporary file left by a write cut short is ignored, and not taken for a bond")
    func leftoverTemporaryFile() async throws {
        let scratch = Scratch()
        try await scratch.store.save(Self.bond())
        let leftover = Self.fileName(peer: Self.otherPeer) + ".new-12345"
        try scratch.plant(leftover, Array("{\"version\": 1, \"bond\": {".utf8))
        #expect(await scratch.store.bonds() == [Self.bond()])
        #expect(await scratch.store.bond(local: Self.local, peer: Self.otherPeer) == nil)
        #expect(scratch.files.contains(leftover), "left alone: not a bond file")
    }

    @Test("A corrupt file is set aside, logged, and the other bonds are still listed")
    func corruptFile() async throws {
        let scratch = Scratch()
        try await scratch.store.save(Self.bond())
        let corrupt = Self.fileName(peer: Self.otherPeer)
        for garbage in ["not json", "{\"version\": 1}", "{\"version\": 2, \"bond\": {}}", ""] {
            try scratch.plant(corrupt, Array(garbage.utf8))
            #expect(await scratch.store.bonds() == [Self.bond()], "\(garbage)")
            #expect(!scratch.files.contains(corrupt), "moved from its place")
        }
        let setAside = scratch.files.filter { $0.hasPrefix(corrupt + ".corrupt-") }
        #expect(setAside.count == 4, "each one kept for a person to look at, none replaced: \(scratch.files)")
        #expect(await scratch.store.bond(local: Self.local, peer: Self.otherPeer) == nil)
    }

    @Test("A bond whose key size is not 7 to 16, or that is not the one its file name says, is set aside")
    func invalidBondFile() async throws {
        let scratch = Scratch()
        var bad = Self.bond()
        bad.keySize = 40
        await #expect(throws: BondStoreError.self) { try await scratch.store.save(bad) }
        try scratch.plant(Self.fileName(), Array(try JSONEncoder().encode(FileBondRecord(bond: bad))))
        #expect(await scratch.store.bond(local: Self.local, peer: Self.peer) == nil)

        // A good bond copied under another pair's name.
        try scratch.plant(Self.fileName(peer: Self.otherPeer), Array(try JSONEncoder().encode(FileBondRecord(bond: Self.bond()))))
        #expect(await scratch.store.bonds().isEmpty)
        #expect(scratch.files.allSatisfy { $0.contains(".corrupt-") }, "\(scratch.files)")
    }

    @Test("A file larger than 64 KiB is not read: set aside, and the store goes on")
    func oversizeFile() async throws {
        let scratch = Scratch()
        var encoded = Array(try JSONEncoder().encode(FileBondRecord(bond: Self.bond())))
        // Valid JSON, padded with white space past the limit: only the size refuses it.
        encoded += [UInt8](repeating: 0x20, count: FileBondStore.maximumFileSize + 1 - encoded.count)
        try scratch.plant(Self.fileName(), encoded)
        #expect(await scratch.store.bond(local: Self.local, peer: Self.peer) == nil)
        #expect(scratch.files.count == 1 && scratch.files[0].hasPrefix(Self.fileName() + ".corrupt-"))

        // Exactly at the limit is read.
        encoded.removeLast()
        try scratch.plant(Self.fileName(), encoded)
        #expect(await scratch.store.bond(local: Self.local, peer: Self.peer) == Self.bond())
    }

    @Test("A symbolic link in place of a bond file is not followed")
    func symbolicLink() async throws {
        let scratch = Scratch()
        try scratch.plant("target", Array(try JSONEncoder().encode(FileBondRecord(bond: Self.bond()))))
        #expect(symlink(scratch.path("target"), scratch.path(Self.fileName())) == 0)
        #expect(await scratch.store.bonds().isEmpty)
        #expect(FileManager.default.fileExists(atPath: scratch.path("target")), "the target is untouched")
    }

    @Test("Bonds of two local identities with the same peer are kept apart")
    func twoLocalIdentities() async throws {
        let scratch = Scratch()
        let mine = Self.bond(ltk: 1)
        let other = Self.bond(local: Self.otherLocal, ltk: 2)
        try await scratch.store.save(mine)
        try await scratch.store.save(other)
        #expect(await scratch.store.bond(local: Self.local, peer: Self.peer) == mine)
        #expect(await scratch.store.bond(local: Self.otherLocal, peer: Self.peer) == other)
        #expect(try await scratch.store.removeBond(local: Self.otherLocal, peer: Self.peer))
        #expect(await scratch.store.bonds() == [mine])
    }

    @Test("A bond file that cannot be opened now (out of file descriptors) is kept, and reported as a typed error")
    func openFailureKeepsTheBond() async throws {
        let scratch = Scratch()
        try await scratch.store.save(Self.bond())
        try await scratch.store.save(Self.bond(peer: Self.otherPeer, ltk: 5))
        let files = scratch.files
        let blocked = Self.fileName()
        // Another store on the directory whose open(2) fails for one file as with EMFILE.
        let failing = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.bonds"), open: { path, flags in
            guard !path.hasSuffix("/" + blocked) else {
                errno = EMFILE
                return -1
            }
            return Glibc.open(path, flags)
        })
        do {
            let found = try await failing.readBond(local: Self.local, peer: Self.peer)
            Issue.record("no error: \(String(describing: found))")
        } catch let BondStoreError.readFailed(reason) {
            #expect(reason.contains("Too many open files") && reason.contains(blocked), "\(reason)")
        }
        #expect(await failing.bond(local: Self.local, peer: Self.peer) == nil, "not available now")
        #expect(await failing.bonds() == [Self.bond(peer: Self.otherPeer, ltk: 5)], "the other bonds are read")
        await #expect(throws: BondStoreError.self) { try await failing.readBonds() }
        #expect(scratch.files == files, "nothing set aside")
        // Once files open again, the bond is there.
        #expect(await scratch.store.bond(local: Self.local, peer: Self.peer) == Self.bond())
    }

    @Test("A file that cannot be read for a reason of the system (here, a socket in its place is not; EMFILE is) is set aside only when it cannot be a bond")
    func onlyWhatCannotBeABondIsSetAside() async throws {
        let scratch = Scratch()
        try await scratch.store.save(Self.bond())
        for error in [EMFILE, ENFILE, ENOMEM, EACCES, EIO, EINTR] {
            let failing = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.bonds"), open: { _, _ in
                errno = error
                return -1
            })
            await #expect(throws: BondStoreError.self, "errno \(error)") { try await failing.readBond(local: Self.local, peer: Self.peer) }
            #expect(scratch.files == [Self.fileName()], "errno \(error): kept")
        }
    }

    // MARK: The copy in memory

    @Test("Bonds are read from disk once; saves and removals, the store's own and another process's, reach the copy")
    func bondsAreReadOnce() async throws {
        let scratch = Scratch()
        // Another process writing the same directory.
        let other = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.other"))
        let peers = (1...20).map { DeviceAddress(BluetoothAddress(rawValue: 0xD0_0000_0000_00 + UInt64($0)), type: .random) }
        for (index, peer) in peers.enumerated() { try await other.save(Self.bond(peer: peer, ltk: UInt128(index))) }
        let store = scratch.store
        #expect(await store.bonds().count == 20)
        let reads = await store.fileReads
        #expect(reads == 20)
        for _ in 0..<50 {
            _ = await store.bonds()
            _ = await store.bond(local: Self.local, peer: peers[3])
            _ = await store.bond(local: Self.local, peer: Self.otherPeer)
        }
        #expect(await store.fileReads == reads, "nothing read again")

        // Its own save and removal.
        try await store.save(Self.bond(peer: Self.peer, ltk: 77))
        #expect(await store.bond(local: Self.local, peer: Self.peer)?.peerKeys.longTermKey == 77)
        #expect(try await store.removeBond(local: Self.local, peer: peers[0]))
        #expect(await store.bond(local: Self.local, peer: peers[0]) == nil)
        #expect(await store.bonds().count == 20)

        // Another process's new bond, changed bond and removal.
        let newcomer = DeviceAddress(BluetoothAddress(rawValue: 0xE0_0000_0000_01), type: .random)
        try await other.save(Self.bond(peer: newcomer, ltk: 88))
        #expect(await store.bond(local: Self.local, peer: newcomer)?.peerKeys.longTermKey == 88)
        try await other.save(Self.bond(peer: peers[1], ltk: 99))
        #expect(await store.bond(local: Self.local, peer: peers[1])?.peerKeys.longTermKey == 99)
        #expect(try await other.removeBond(local: Self.local, peer: peers[2]))
        #expect(await store.bond(local: Self.local, peer: peers[2]) == nil)
        #expect(await store.bonds().count == 20)
        #expect(await store.fileReads <= reads + 6, "only what changed is read again")
    }

    @Test("The store's revision changes with every change to the bonds, its own and another process's")
    func revisionFollowsChanges() async throws {
        let scratch = Scratch()
        let other = FileBondStore(directory: scratch.directory, logger: Logger(label: "test.other"))
        let store = scratch.store
        // No directory yet: nothing to watch, the store reads the disk on each call.
        #expect(await store.revision() == nil)
        try await other.save(Self.bond(peer: DeviceAddress(BluetoothAddress(rawValue: 0xE0_0000_0000_01), type: .random)))
        let first = try #require(await store.revision())
        #expect(await store.revision() == first, "nothing changed")
        try await store.save(Self.bond())
        let second = try #require(await store.revision())
        #expect(second != first)
        #expect(await store.revision() == second)
        try await other.save(Self.bond(peer: Self.otherPeer))
        let third = try #require(await store.revision())
        #expect(third != second)
        #expect(try await other.removeBond(local: Self.local, peer: Self.otherPeer))
        #expect(await store.revision() != third)
        let memory = InMemoryBondStore()
        let before = try #require(await memory.revision())
        await memory.save(Self.bond())
        #expect(await memory.revision() != before)
    }

    // MARK: Memory store

    @Test("The memory store finds bonds by both identities, base address type, and forgets them")
    func inMemory() async {
        let store = InMemoryBondStore()
        let mine = Self.bond(ltk: 1)
        let other = Self.bond(local: Self.otherLocal, ltk: 2)
        await store.save(mine)
        await store.save(other)
        #expect(await store.bond(local: Self.local, peer: DeviceAddress(Self.peer.address, type: .publicIdentity)) == mine)
        #expect(await store.bond(local: Self.otherLocal, peer: Self.peer) == other)
        #expect(await store.bond(local: Self.local, peer: Self.otherPeer) == nil)
        #expect(await store.bonds().count == 2)
        #expect(await store.removeBond(local: Self.local, peer: Self.peer))
        #expect(await store.removeBond(local: Self.local, peer: Self.peer) == false)
        #expect(await store.bonds() == [other])
    }
}
