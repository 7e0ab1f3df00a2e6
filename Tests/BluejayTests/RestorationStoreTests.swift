@testable import Bluejay
import BluetoothHost
import BluetoothVirtual
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The restoration file is private to its user and never trusted: whatever is found at its
/// path is loaded only when it is a valid record; anything else is set aside and ignored.
@Suite("Restoration file", .timeLimit(.minutes(1)))
struct RestorationStoreTests {
    /// A fresh directory under the temporary directory, removed at the end of the test.
    final class Scratch {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-restore-\(UUID().uuidString)")
        var directory: URL { root.appendingPathComponent("state/bluejay", isDirectory: true) }
        lazy var store = RestorationStore(directory: directory, restoreIdentifier: "app")

        deinit { try? FileManager.default.removeItem(at: root) }

        /// Puts `bytes` where the state file goes, as something else than Bluejay would.
        func plant(_ bytes: [UInt8]) throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: store.fileURL)
        }

        func plant(_ text: String) throws { try plant(Array(text.utf8)) }

        /// The files in the directory besides the state file.
        var others: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0 != "app.json" }.sorted()
        }
    }

    static let record = RestorationRecord(peripheral: "F0:00:00:00:00:01/random",
                                          listens: [CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))])

    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    /// Loads, expects the file set aside and ignored, and returns why.
    @discardableResult
    static func expectSetAside(_ scratch: Scratch, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard case let .setAside(reason, movedTo) = scratch.store.load() else {
            Issue.record("the file was trusted", sourceLocation: sourceLocation)
            return nil
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.store.fileURL.path), "not at its place any more", sourceLocation: sourceLocation)
        #expect(movedTo?.lastPathComponent.hasPrefix("app.json.corrupt-") == true, "\(String(describing: movedTo))", sourceLocation: sourceLocation)
        #expect(scratch.others == movedTo.map { [$0.lastPathComponent] }, sourceLocation: sourceLocation)
        #expect(scratch.store.load() == .nothing, "ignored: the next start finds nothing", sourceLocation: sourceLocation)
        return reason
    }

    // MARK: Writing

    @Test("The file is written 0600 in a 0700 directory, its missing parents 0700 too, with nothing left beside it")
    func modes() throws {
        let scratch = Scratch()
        try scratch.store.save(Self.record)
        #expect(Self.mode(scratch.store.fileURL.path) == 0o600)
        #expect(Self.mode(scratch.directory.path) == 0o700)
        #expect(Self.mode(scratch.directory.deletingLastPathComponent().path) == 0o700)
        #expect(scratch.others.isEmpty, "no temporary file left")
        #expect(scratch.store.load() == .record(Self.record))
    }

    @Test("An existing directory of this user is made private, and a world-readable file is replaced by a 0600 one")
    func tightensLooserModes() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        #expect(chmod(scratch.directory.path, 0o777) == 0)
        #expect(FileManager.default.createFile(atPath: scratch.store.fileURL.path, contents: Data("{}".utf8)))
        #expect(chmod(scratch.store.fileURL.path, 0o666) == 0)
        try scratch.store.save(Self.record)
        #expect(Self.mode(scratch.directory.path) == 0o700)
        #expect(Self.mode(scratch.store.fileURL.path) == 0o600)
    }

    @Test("A world-readable file left by an earlier version is made private when read")
    func loadTightensAnOldFile() throws {
        let scratch = Scratch()
        try scratch.plant(Array(try JSONEncoder().encode(Self.record)))
        #expect(chmod(scratch.store.fileURL.path, 0o644) == 0)
        #expect(scratch.store.load() == .record(Self.record))
        #expect(Self.mode(scratch.store.fileURL.path) == 0o600)
    }

    @Test("A symbolic link at the file's place is replaced, not written through")
    func saveDoesNotFollowALink() throws {
        let scratch = Scratch()
        let elsewhere = scratch.root.appendingPathComponent("elsewhere.txt")
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        try Data("untouched".utf8).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(at: scratch.store.fileURL, withDestinationURL: elsewhere)
        try scratch.store.save(Self.record)
        #expect(try String(contentsOf: elsewhere, encoding: .utf8) == "untouched")
        #expect(Self.mode(scratch.store.fileURL.path) == 0o600, "a regular file now")
        #expect(scratch.store.load() == .record(Self.record))
    }

    // MARK: Reading what cannot be trusted

    @Test("Corrupt JSON is set aside, its bytes kept for a post-mortem")
    func corruptJSON() throws {
        let scratch = Scratch()
        try scratch.plant("{\"version\": 1, \"peripheral\": \"F0:00:00:0")
        guard case let .setAside(_, movedTo?) = scratch.store.load() else {
            Issue.record("the file was trusted")
            return
        }
        #expect(try String(contentsOf: movedTo, encoding: .utf8) == "{\"version\": 1, \"peripheral\": \"F0:00:00:0")
        #expect(scratch.store.load() == .nothing)
    }

    @Test("Two corrupt files in a row are both kept")
    func twoCorruptFiles() throws {
        let scratch = Scratch()
        try scratch.plant("first")
        Self.expectSetAside(scratch)
        try scratch.plant("second")
        #expect(scratch.store.load() != .nothing)
        #expect(scratch.others.count == 2)
    }

    @Test("A file over 1 MiB is set aside unread, a sparse one of 1 GiB too")
    func hugeFile() throws {
        let scratch = Scratch()
        var padded = Array("{\"version\":1,\"listens\":[],\"peripheral\":\"F0:00:00:00:00:01/random\"}".utf8)
        padded += [UInt8](repeating: 0x20, count: RestorationStore.maximumFileSize + 1 - padded.count)
        try scratch.plant(padded)
        #expect(Self.expectSetAside(scratch)?.contains("more than 1048576") == true)

        let sparse = Scratch()
        try sparse.plant("{}")
        #expect(truncate(sparse.store.fileURL.path, 1 << 30) == 0)
        Self.expectSetAside(sparse)
    }

    @Test("Exactly 1 MiB of valid JSON (padded with spaces) is still read")
    func fileAtTheLimit() throws {
        let scratch = Scratch()
        var padded = Array("{\"version\":1,\"listens\":[],\"peripheral\":\"F0:00:00:00:00:01/random\"}".utf8)
        padded += [UInt8](repeating: 0x20, count: RestorationStore.maximumFileSize - padded.count)
        try scratch.plant(padded)
        #expect(scratch.store.load() == .record(RestorationRecord(peripheral: "F0:00:00:00:00:01/random")))
    }

    @Test("Wrong types, and values that are not a record, are set aside", arguments: [
        "{\"version\": \"1\", \"peripheral\": \"F0:00:00:00:00:01/random\", \"listens\": []}",
        "{\"version\": 1, \"peripheral\": 5, \"listens\": []}",
        "{\"version\": 1, \"peripheral\": \"F0:00:00:00:00:01/random\", \"listens\": {}}",
        "{\"version\": 1, \"peripheral\": \"F0:00:00:00:00:01/random\", \"listens\": [{\"uuid\": 10, \"service\": \"180D\"}]}",
        "[]", "null", "\"text\"", "",
        "{\"version\": 1e400, \"listens\": []}",
    ])
    func wrongTypes(_ text: String) throws {
        let scratch = Scratch()
        try scratch.plant(text)
        Self.expectSetAside(scratch)
    }

    @Test("Deeply nested JSON is set aside, not a stack overflow")
    func deepNesting() throws {
        for text in [String(repeating: "[", count: 500_000), "{\"listens\":" + String(repeating: "[{\"a\":", count: 100_000)] {
            let scratch = Scratch()
            try scratch.plant(text)
            Self.expectSetAside(scratch)
        }
    }

    @Test("UUIDs of 32 or 36 spaces or dashes are set aside, in a listen or its service", arguments: [
        String(repeating: " ", count: 32), String(repeating: " ", count: 36), String(repeating: "-", count: 36), "not a uuid",
    ])
    func badUUIDs(_ bad: String) throws {
        for (uuid, service) in [(bad, "180D"), ("2A37", bad)] {
            let scratch = Scratch()
            let record = RestorationRecord(peripheral: "F0:00:00:00:00:01/random",
                                           listens: [CharacteristicIdentifier(uuid: uuid, service: ServiceIdentifier(uuid: service))])
            try scratch.plant(Array(try JSONEncoder().encode(record)))
            #expect(Self.expectSetAside(scratch)?.contains("does not name UUIDs") == true)
        }
    }

    @Test("Too many listens are set aside; as many as allowed are restored")
    func tooManyEntries() throws {
        let service = ServiceIdentifier(uuid: "180D")
        let listens = (0..<RestorationStore.maximumListens + 1).map {
            CharacteristicIdentifier(uuid: BluetoothUUID(UInt16(0x2000 + $0)), service: service)
        }
        let scratch = Scratch()
        try scratch.plant(Array(try JSONEncoder().encode(RestorationRecord(peripheral: "F0:00:00:00:00:01/random", listens: listens))))
        #expect(Self.expectSetAside(scratch)?.contains("more than 1024") == true)

        let allowed = RestorationRecord(peripheral: "F0:00:00:00:00:01/random", listens: Array(listens.dropLast()))
        try scratch.store.save(allowed)
        #expect(scratch.store.load() == .record(allowed))
    }

    @Test("A record that is not consistent is set aside", arguments: [
        RestorationRecord(version: 2, peripheral: "F0:00:00:00:00:01/random"),
        RestorationRecord(peripheral: "not an address"),
        RestorationRecord(peripheral: "F0:00:00:00:00:01/random/extra"),
        RestorationRecord(peripheral: nil, listens: [CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))]),
    ])
    func inconsistent(_ record: RestorationRecord) throws {
        let scratch = Scratch()
        try scratch.plant(Array(try JSONEncoder().encode(record)))
        Self.expectSetAside(scratch)
    }

    @Test("A symbolic link, a directory or a FIFO at the file's place is set aside without being followed or waited on")
    func notARegularFile() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
        let target = scratch.root.appendingPathComponent("target.json")
        try JSONEncoder().encode(Self.record).write(to: target)
        try FileManager.default.createSymbolicLink(at: scratch.store.fileURL, withDestinationURL: target)
        #expect(Self.expectSetAside(scratch) == "a symbolic link")
        #expect(FileManager.default.fileExists(atPath: target.path), "the link is moved, not its target")

        let directoryScratch = Scratch()
        try FileManager.default.createDirectory(at: directoryScratch.store.fileURL, withIntermediateDirectories: true)
        #expect(directoryScratch.store.load() != .record(Self.record))
        #expect(!FileManager.default.fileExists(atPath: directoryScratch.store.fileURL.path))

        let fifoScratch = Scratch()
        try FileManager.default.createDirectory(at: fifoScratch.directory, withIntermediateDirectories: true)
        #expect(mkfifo(fifoScratch.store.fileURL.path, 0o600) == 0)
        Self.expectSetAside(fifoScratch)
    }

    // MARK: At start

    @Test("Bluejay started on a hostile file logs it, sets it aside, and runs without restoring")
    func startWithHostileFile() async throws {
        let scratch = Scratch()
        let hostile = RestorationRecord(peripheral: "F0:00:00:00:00:01/random", listens: [
            CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: String(repeating: " ", count: 32))),
        ])
        try scratch.plant(Array(try JSONEncoder().encode(hostile)))
        let log = EventLog()
        let link = VirtualLink(configuration: .init(timeScale: 1, seed: 10))
        defer { link.shutdown() }
        let config = BackgroundRestoreConfig(restoreIdentifier: "app", backgroundRestorer: log, listenRestorer: log,
                                             directory: scratch.directory)
        let controller = link.addController(name: "central", address: try #require(BluetoothAddress("C0:00:00:00:00:01")))
        let bluejay = Bluejay()
        bluejay.register(logObserver: log)
        bluejay.start(mode: .new(StartOptions(backgroundRestore: .enable(config), transport: .transport(controller.makeTransport()))))
        try await bluejay.waitUntilReady()
        let stateFile = scratch.store.fileURL.path
        #expect(await eventually { !FileManager.default.fileExists(atPath: stateFile) })
        #expect(scratch.others.count == 1, "set aside: \(scratch.others)")
        #expect(await eventually { log.all.contains { $0.contains("is not trusted") && $0.contains("does not name UUIDs") } })
        #expect(!bluejay.isConnected)
        #expect(!bluejay.isConnecting, "no restoration attempted")
        await bluejay.stop()
    }
}
