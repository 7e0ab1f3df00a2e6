import BluetoothCore
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bonds on disk: one JSON file per (local identity, peer identity) in a directory,
/// `<local>-<type>_<peer>-<type>.json` (addresses as 12 hexadecimal digits, type `public` or
/// `random`).
///
/// The files hold keys, so only their user may read them: the directory is made `0700`, the
/// files `0600`, each written atomically (a new file in the same directory, flushed, renamed
/// over the old one). A file is not trusted when read back: one that is not a regular file
/// of this user, larger than ``maximumFileSize``, not a bond's JSON, or whose bond is not
/// valid or not the one its name says is logged and set aside (renamed
/// `<name>.corrupt-<UTC time>`), so that a corrupt or hostile file costs one bond, never a
/// crash. The same approach as Bluejay's restoration store.
public actor FileBondStore: BondStore {
    /// The largest bond file read: 64 KiB, far more than a bond needs (under 1 KiB); a
    /// larger file is set aside unread.
    public static let maximumFileSize = 64 * 1024

    /// The directory the files are in.
    public nonisolated let directory: String
    private let logger: Logger

    public init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Where bonds go in a state directory: `<state>/bonds`.
    public static func defaultDirectory(stateDirectory: String) -> String {
        URL(fileURLWithPath: stateDirectory, isDirectory: true).appendingPathComponent("bonds", isDirectory: true).path
    }

    // MARK: BondStore

    public func bond(local: DeviceAddress, peer: DeviceAddress) -> Bond? {
        let identities = BondIdentities(local: local, peer: peer)
        return load(fileName: Self.fileName(identities))
    }

    /// Every bond whose file can be trusted, sorted by file name (local, then peer identity).
    public func bonds() -> [Bond] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            if FileManager.default.fileExists(atPath: directory) { logger.warning("cannot list bonds in \(directory): \(error)") }
            return []
        }
        // Temporary files of a write cut short and files set aside do not end in ".json".
        return names.filter { Self.identities(fileName: $0) != nil }.sorted().compactMap { load(fileName: $0) }
    }

    public func save(_ bond: Bond) throws(BondStoreError) {
        if let invalidity = Self.invalidity(of: bond) { throw .invalidBond(invalidity) }
        try prepareDirectory()
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            data = try encoder.encode(FileBondRecord(bond: bond))
        } catch {
            throw .writeFailed("cannot encode the bond with \(bond.peerIdentity): \(error)")
        }
        try writeAtomically(data, to: path(Self.fileName(bond.identities)))
    }

    @discardableResult
    public func removeBond(local: DeviceAddress, peer: DeviceAddress) throws(BondStoreError) -> Bool {
        let file = path(Self.fileName(BondIdentities(local: local, peer: peer)))
        if unlink(file) == 0 { return true }
        let error = errno
        if error == ENOENT { return false }
        throw .writeFailed("cannot remove \(file): \(Self.describe(error))")
    }

    // MARK: File names

    static func fileName(_ identities: BondIdentities) -> String {
        "\(name(identities.local))_\(name(identities.peer)).json"
    }

    private static func name(_ address: DeviceAddress) -> String {
        Hex.encode(address.address.bytes) + (address.type.base == .public ? "-public" : "-random")
    }

    /// The identities a file name stands for; `nil` for any other file.
    static func identities(fileName: String) -> BondIdentities? {
        guard fileName.hasSuffix(".json") else { return nil }
        let parts = fileName.dropLast(5).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, let local = address(parts[0]), let peer = address(parts[1]) else { return nil }
        return BondIdentities(local: local, peer: peer)
    }

    private static func address(_ text: Substring) -> DeviceAddress? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 12, let address = BluetoothAddress(String(parts[0])) else { return nil }
        switch parts[1] {
        case "public": return DeviceAddress(address, type: .public)
        case "random": return DeviceAddress(address, type: .random)
        default: return nil
        }
    }

    private func path(_ fileName: String) -> String {
        URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(fileName).path
    }

    // MARK: Reading

    /// Why a bond cannot be kept or trusted, if it cannot.
    static func invalidity(of bond: Bond) -> String? {
        guard Bond.keySizes.contains(bond.keySize) else { return "a key size of \(bond.keySize) octets, not 7 to 16" }
        return nil
    }

    /// The bond in the file, if there is a file and it can be trusted; one that cannot is set aside.
    private func load(fileName: String) -> Bond? {
        let file = path(fileName)
        // Not through a symbolic link, and without waiting on a FIFO put in its place.
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT { return nil }
            return setAside(file, error == ELOOP ? "a symbolic link" : "cannot be opened: \(Self.describe(error))")
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return setAside(file, "cannot be looked at: \(Self.describe(errno))") }
        guard status.st_mode & S_IFMT == S_IFREG else { return setAside(file, "not a regular file") }
        guard status.st_uid == geteuid() else { return setAside(file, "owned by user \(status.st_uid), not \(geteuid())") }
        guard Int(status.st_size) <= Self.maximumFileSize else {
            return setAside(file, "\(status.st_size) bytes, more than \(Self.maximumFileSize)")
        }
        // A file made private by someone else's hand since: private again.
        if status.st_mode & 0o077 != 0 { _ = fchmod(descriptor, 0o600) }
        let bytes: [UInt8]
        switch Self.readAll(descriptor, atMost: Self.maximumFileSize) {
        case let .success(read): bytes = read
        case let .failure(failure): return setAside(file, failure.reason)
        }
        let record: FileBondRecord
        do {
            record = try JSONDecoder().decode(FileBondRecord.self, from: Data(bytes))
        } catch {
            return setAside(file, "not a bond: \(error)")
        }
        guard record.version == FileBondRecord.currentVersion else {
            return setAside(file, "version \(record.version), not \(FileBondRecord.currentVersion)")
        }
        if let invalidity = Self.invalidity(of: record.bond) { return setAside(file, invalidity) }
        // A file renamed to stand for other identities is not trusted.
        guard Self.identities(fileName: fileName) == record.bond.identities else {
            return setAside(file, "holds the bond of \(record.bond.localIdentity) with \(record.bond.peerIdentity), not what its name says")
        }
        return record.bond
    }

    private struct ReadFailure: Error {
        var reason: String
    }

    /// Everything in the file, unless it holds more than `limit` bytes (it may have grown
    /// since it was looked at).
    private static func readAll(_ descriptor: Int32, atMost limit: Int) -> Result<[UInt8], ReadFailure> {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
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

    /// Logs why the file is not trusted and renames it aside, `<name>.corrupt-<UTC time>`
    /// (with a number if that exists). Returns `nil`, the bond the caller does not get.
    private func setAside(_ file: String, _ reason: String) -> Bond? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let base = file + ".corrupt-" + formatter.string(from: Date())
        for attempt in 0..<100 {
            let target = attempt == 0 ? base : "\(base)-\(attempt)"
            // link(2) then unlink(2): never replaces a file set aside earlier, as rename(2) would.
            if link(file, target) == 0 {
                _ = unlink(file)
                logger.warning("bond file \(file) ignored (\(reason)); moved to \(target)")
                return nil
            }
            guard errno == EEXIST else { break }
        }
        // Cannot keep it (no hard links here, or no room): at least never read it again.
        if rename(file, base) == 0 {
            logger.warning("bond file \(file) ignored (\(reason)); moved to \(base)")
        } else {
            _ = unlink(file)
            logger.warning("bond file \(file) ignored (\(reason)) and removed: it could not be moved aside")
        }
        return nil
    }

    // MARK: Writing

    /// Creates the directory `0700` (and its missing parents); tightens an existing one of this
    /// user to `0700`; refuses one of another user (they could read or replace the keys).
    private func prepareDirectory() throws(BondStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .writeFailed("cannot create \(directory): \(error)")
        }
        var status = stat()
        guard stat(directory, &status) == 0 else { throw .writeFailed("cannot look at \(directory): \(Self.describe(errno))") }
        guard status.st_uid == geteuid() else {
            throw .writeFailed("\(directory) belongs to user \(status.st_uid), not \(geteuid()): no keys are written there")
        }
        if status.st_mode & 0o077 != 0, chmod(directory, 0o700) != 0 {
            throw .writeFailed("cannot make \(directory) private (0700): \(Self.describe(errno))")
        }
    }

    /// Writes a new file `0600` next to `file`, flushes it and renames it over `file`: a
    /// reader sees the old bond or the new one, never part of one.
    private func writeAtomically(_ data: Data, to file: String) throws(BondStoreError) {
        let temporary = file + ".new-\(getpid())"
        _ = unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .writeFailed("cannot create \(temporary): \(Self.describe(errno))") }
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
        if failure == nil, rename(temporary, file) != 0 { failure = "rename: \(Self.describe(errno))" }
        if let failure {
            _ = unlink(temporary)
            throw .writeFailed("cannot write \(file): \(failure)")
        }
    }
}

/// What a bond file holds: a format version and the bond.
struct FileBondRecord: Codable, Sendable {
    static let currentVersion = 1

    var version = Self.currentVersion
    var bond: Bond

    init(bond: Bond) { self.bond = bond }
}
