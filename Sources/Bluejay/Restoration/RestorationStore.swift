import BluetoothHost
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What Bluejay persists for restoration: the connected peripheral and its active listens.
struct RestorationRecord: Codable, Sendable, Equatable {
    static let currentVersion = 1

    var version = Self.currentVersion
    /// ``PeripheralIdentifier/stringValue`` of the connected peripheral.
    var peripheral: String?
    var listens: [CharacteristicIdentifier] = []

    var peripheralIdentifier: PeripheralIdentifier? { peripheral.flatMap(PeripheralIdentifier.init(string:)) }
    var isEmpty: Bool { peripheral == nil && listens.isEmpty }

    /// Why the record cannot be trusted, if it cannot: another version, a peripheral that is
    /// not an identifier, listens without a peripheral, too many of them, or a UUID that does
    /// not parse (a restored listen must name a real characteristic of a real service).
    var invalidity: String? {
        guard version == Self.currentVersion else { return "version \(version) is not \(Self.currentVersion)" }
        if let peripheral, PeripheralIdentifier(string: peripheral) == nil {
            return "the peripheral \"\(peripheral.prefix(64))\" is not an identifier"
        }
        if peripheral == nil, !listens.isEmpty { return "\(listens.count) listen(s) without a peripheral" }
        guard listens.count <= RestorationStore.maximumListens else {
            return "\(listens.count) listens, more than \(RestorationStore.maximumListens)"
        }
        for listen in listens where listen.uuid == nil || listen.service.uuid == nil {
            return "the listen to \"\(listen.uuidString.prefix(64))\" in \"\(listen.service.uuidString.prefix(64))\" does not name UUIDs"
        }
        return nil
    }
}

/// One JSON file per restore identifier, `<directory>/<identifier>.json`.
///
/// The file holds which peripheral the app was connected to, so only its user may read it:
/// it is written `0600` in a `0700` directory, atomically (a new file, flushed, renamed over
/// the old one). It is not trusted when read back: a file that is not a regular file of this
/// user, larger than ``maximumFileSize``, not JSON of a ``RestorationRecord``, or whose record
/// is not valid is set aside (renamed `<name>.corrupt-<UTC time>`) and ignored, so that a
/// corrupt or hostile file costs one restoration, never a crash at every start.
struct RestorationStore: Sendable {
    /// The largest state file read: 1 MiB, far more than a record of ``maximumListens``
    /// listens needs; a larger file is set aside unread.
    static let maximumFileSize = 1 << 20
    /// The most listens a record may restore; a record with more is set aside. More than an
    /// app subscribes to on one peripheral.
    static let maximumListens = 1_024

    let fileURL: URL

    /// What ``load()`` found.
    enum Loaded: Sendable, Equatable {
        /// No state file.
        case nothing
        case record(RestorationRecord)
        /// The file could not be trusted: why, and where it was moved (`nil` if it could not be).
        case setAside(reason: String, movedTo: URL?)
    }

    init(directory: URL, restoreIdentifier: String) {
        // Keep the identifier readable but never let it name another directory.
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
        let safe = String(restoreIdentifier.map { allowed.contains($0) ? $0 : "_" })
        let name = safe.isEmpty || safe.allSatisfy({ $0 == "." }) ? "_" : safe
        fileURL = directory.appendingPathComponent(name + ".json")
    }

    var directoryURL: URL { fileURL.deletingLastPathComponent() }

    /// The record, if there is a state file and it can be trusted; a file that cannot is set
    /// aside. Never throws: at worst the app starts without restoration.
    func load() -> Loaded {
        // Not through a symbolic link, and without waiting on a FIFO put in its place.
        let descriptor = open(fileURL.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT { return .nothing }
            return setAside(error == ELOOP ? "a symbolic link" : "cannot be opened: \(Self.describe(error))")
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return setAside("cannot be looked at: \(Self.describe(errno))") }
        guard status.st_mode & S_IFMT == S_IFREG else { return setAside("not a regular file") }
        guard status.st_uid == geteuid() else { return setAside("owned by user \(status.st_uid), not \(geteuid())") }
        guard Int(status.st_size) <= Self.maximumFileSize else {
            return setAside("\(status.st_size) bytes, more than \(Self.maximumFileSize)")
        }
        // A file written before files were private: private from now on.
        if status.st_mode & 0o077 != 0 { _ = fchmod(descriptor, 0o600) }
        let bytes: [UInt8]
        switch Self.readAll(descriptor, atMost: Self.maximumFileSize) {
        case let .success(read): bytes = read
        case let .failure(failure): return setAside(failure.reason)
        }
        let record: RestorationRecord
        do {
            record = try JSONDecoder().decode(RestorationRecord.self, from: Data(bytes))
        } catch {
            return setAside("not a restoration record: \(error)")
        }
        if let invalidity = record.invalidity { return setAside(invalidity) }
        return .record(record)
    }

    /// Writes the record; an empty record removes the file.
    func save(_ record: RestorationRecord) throws(BluejayError) {
        do {
            if record.isEmpty {
                if FileManager.default.fileExists(atPath: fileURL.path) { try FileManager.default.removeItem(at: fileURL) }
                return
            }
            try prepareDirectory()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try writeAtomically(try encoder.encode(record))
        } catch let error as BluejayError {
            throw error
        } catch {
            throw .restorationFailed("cannot write \(fileURL.path): \(error)")
        }
    }

    // MARK: Internals

    private struct ReadFailure: Error {
        var reason: String
    }

    /// Everything in the file, unless it holds more than `limit` bytes (it may have grown
    /// since it was looked at).
    private static func readAll(_ descriptor: Int32, atMost limit: Int) -> Result<[UInt8], ReadFailure> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadFailure(reason: "cannot be read: \(describe(errno))"))
            }
            guard bytes.count + count <= limit else { return .failure(ReadFailure(reason: "more than \(limit) bytes")) }
            bytes += chunk.prefix(count)
        }
    }

    private static func describe(_ error: Int32) -> String { String(cString: strerror(error)) }

    /// Renames the file aside, `<name>.corrupt-<UTC time>` (with a number if that exists).
    private func setAside(_ reason: String) -> Loaded {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let base = fileURL.path + ".corrupt-" + formatter.string(from: Date())
        for attempt in 0..<100 {
            let target = attempt == 0 ? base : "\(base)-\(attempt)"
            // link(2) then unlink(2): never replaces a file set aside earlier, as rename(2) would.
            if link(fileURL.path, target) == 0 {
                _ = unlink(fileURL.path)
                return .setAside(reason: reason, movedTo: URL(fileURLWithPath: target))
            }
            guard errno == EEXIST else { break }
        }
        // Cannot keep it (no hard links here, or no room): at least never read it again.
        if rename(fileURL.path, base) == 0 { return .setAside(reason: reason, movedTo: URL(fileURLWithPath: base)) }
        _ = unlink(fileURL.path)
        return .setAside(reason: reason, movedTo: nil)
    }

    /// Creates the directory `0700` (and its missing parents); tightens an existing one of this
    /// user to `0700`; refuses one of another user (they could read or replace the file).
    private func prepareDirectory() throws(BluejayError) {
        let path = directoryURL.path
        do {
            try FileManager.default.createDirectory(at: directoryURL, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .restorationFailed("cannot create \(path): \(error)")
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw .restorationFailed("cannot look at \(path): \(Self.describe(errno))") }
        guard status.st_uid == geteuid() else {
            throw .restorationFailed("\(path) belongs to user \(status.st_uid), not \(geteuid()): the state is not written there")
        }
        if status.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw .restorationFailed("cannot make \(path) private (0700): \(Self.describe(errno))")
        }
    }

    /// Writes a new file `0600` next to the state file, flushes it and renames it over the
    /// state file: a reader sees the old record or the new one, never part of one.
    private func writeAtomically(_ data: Data) throws(BluejayError) {
        let temporary = fileURL.path + ".new-\(getpid())"
        _ = unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .restorationFailed("cannot create \(temporary): \(Self.describe(errno))") }
        var failure: String?
        // The umask may only remove bits; this makes the mode exactly 0600 whatever it is.
        if fchmod(descriptor, 0o600) != 0 { failure = "chmod: \(Self.describe(errno))" }
        data.withUnsafeBytes { buffer in
            var offset = 0
            while failure == nil, offset < buffer.count, let base = buffer.baseAddress {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    failure = "write: \(Self.describe(errno))"
                }
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "fsync: \(Self.describe(errno))" }
        if close(descriptor) != 0, failure == nil { failure = "close: \(Self.describe(errno))" }
        if failure == nil, rename(temporary, fileURL.path) != 0 { failure = "rename: \(Self.describe(errno))" }
        if let failure {
            _ = unlink(temporary)
            throw .restorationFailed("cannot write \(fileURL.path): \(failure)")
        }
    }
}
