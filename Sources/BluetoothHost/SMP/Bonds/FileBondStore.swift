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
/// crash. A file the system cannot read now (out of file descriptors, an I/O error, no
/// permission) is kept and reported: ``BondStoreError/readFailed(_:)`` from
/// ``readBond(local:peer:)`` and ``readBonds()``, an error logged by the others. The files
/// are handled by `PrivateFile`, as Bluejay's restoration store's are.
///
/// The bonds are read once and kept in memory: a lookup reads no file. The store's own saves
/// and removals update the copy; so do those of another process (`bluejay bonds --remove`
/// while an app runs), which the store learns from the kernel (inotify on Linux: one
/// non-blocking read per call when nothing changed, and only the files that changed are read
/// again). Where the directory cannot be watched (not Linux, no inotify instance left, or no
/// directory yet), each call reads the disk as it is.
public actor FileBondStore: BondStore {
    /// The largest bond file read: 64 KiB, far more than a bond needs (under 1 KiB); a
    /// larger file is set aside unread.
    public static let maximumFileSize = 64 * 1024

    /// The directory the files are in.
    public nonisolated let directory: String
    private let logger: Logger
    private let open: PrivateFile.Opener

    /// What a bond file held when last read.
    private enum Entry: Sendable {
        case bond(Bond)
        /// There, but not readable then: read again when asked for.
        case unreadable(String)
    }

    /// The bonds by file name while the directory is watched; `nil`: read the disk.
    private var copy: [String: Entry]?
    private var watch: DirectoryWatch?
    private var changes: UInt64 = 0
    /// Bond files read so far (tests and measurements).
    private(set) var fileReads = 0

    public init(directory: String, logger: Logger) {
        self.init(directory: directory, logger: logger, open: PrivateFile.systemOpen)
    }

    /// `open` stands in for `open(2)`: tests make it fail as the system may.
    init(directory: String, logger: Logger, open: @escaping PrivateFile.Opener) {
        self.directory = directory
        self.logger = logger
        self.open = open
    }

    /// Where bonds go in a state directory: `<state>/bonds`.
    public static func defaultDirectory(stateDirectory: String) -> String {
        URL(fileURLWithPath: stateDirectory, isDirectory: true).appendingPathComponent("bonds", isDirectory: true).path
    }

    // MARK: BondStore

    /// The bond, if there is one that can be read now (a kept bond that cannot be read is
    /// logged as an error and looks absent: see ``readBond(local:peer:)``).
    public func bond(local: DeviceAddress, peer: DeviceAddress) -> Bond? {
        do {
            return try lookUp(local: local, peer: peer)
        } catch {
            logger.error("\(error)")
            return nil
        }
    }

    public func readBond(local: DeviceAddress, peer: DeviceAddress) async throws(BondStoreError) -> Bond? {
        try lookUp(local: local, peer: peer)
    }

    private func lookUp(local: DeviceAddress, peer: DeviceAddress) throws(BondStoreError) -> Bond? {
        let name = Self.fileName(BondIdentities(local: local, peer: peer))
        let entry: Entry?
        if refresh(), let kept = copy?[name] {
            if case let .bond(bond) = kept { return bond }
            entry = reread(name)
        } else if copy != nil {
            return nil
        } else {
            entry = read(name)
        }
        switch entry {
        case let .bond(bond)?: return bond
        case let .unreadable(reason)?: throw .readFailed("the bond file \(path(name)) \(reason); it is kept")
        case nil: return nil
        }
    }

    /// Every bond that can be read now, sorted by file name (local, then peer identity). One
    /// that cannot is logged as an error and left out (see ``readBonds()``).
    public func bonds() -> [Bond] {
        let (bonds, failures) = listing()
        for failure in failures { logger.error("\(failure)") }
        return bonds
    }

    public func readBonds() async throws(BondStoreError) -> [Bond] {
        let (bonds, failures) = listing()
        if !failures.isEmpty { throw .readFailed(failures.joined(separator: "; ")) }
        return bonds
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
        let name = Self.fileName(bond.identities)
        try writeAtomically(data, to: path(name))
        // The watch reports the rename too (one file read again); the copy is right already.
        copy?[name] = .bond(bond)
        changes += 1
    }

    @discardableResult
    public func removeBond(local: DeviceAddress, peer: DeviceAddress) throws(BondStoreError) -> Bool {
        let name = Self.fileName(BondIdentities(local: local, peer: peer))
        if unlink(path(name)) == 0 {
            copy?[name] = nil
            changes += 1
            return true
        }
        let error = errno
        if error == ENOENT { return false }
        throw .writeFailed("cannot remove \(path(name)): \(PrivateFile.describe(error))")
    }

    /// Changes whenever the bonds may have changed, by this store or on disk; `nil` while the
    /// directory is not watched (each call reads the disk then).
    public func revision() async -> UInt64? {
        refresh() ? changes : nil
    }

    // MARK: The copy in memory

    /// Brings the copy up to date with the directory: all of it when the watch begins (or
    /// lost events), else the files the watch says changed. Returns whether there is a copy.
    private func refresh() -> Bool {
        if let watch, copy != nil {
            switch watch.takeChanges() {
            case .none:
                return true
            case let .files(names):
                let bondFiles = names.filter { Self.identities(fileName: $0) != nil }
                for name in bondFiles { _ = reread(name) }
                if !bondFiles.isEmpty { changes += 1 }
                return true
            case .everything:
                self.watch = nil
                copy = nil
            }
        }
        // Watched from before the listing: what changes during it is reported next time.
        guard let started = DirectoryWatch.watch(directory) else { return false }
        guard let names = fileNames() else { return false }
        watch = started
        var entries: [String: Entry] = [:]
        for name in names { entries[name] = read(name) }
        copy = entries
        changes += 1
        return true
    }

    /// Reads a file again into the copy.
    private func reread(_ name: String) -> Entry? {
        let entry = read(name)
        copy?[name] = entry
        return entry
    }

    /// The bonds, and why any kept could not be read.
    private func listing() -> (bonds: [Bond], failures: [String]) {
        var entries: [(String, Entry)] = []
        if refresh(), let copy {
            for name in copy.keys.sorted() {
                guard let entry = copy[name] else { continue }
                if case .unreadable = entry {
                    if let again = reread(name) { entries.append((name, again)) }
                } else {
                    entries.append((name, entry))
                }
            }
        } else {
            guard let names = fileNames() else {
                return ([], ["cannot list the bonds in \(directory)"])
            }
            entries = names.sorted().compactMap { name in read(name).map { (name, $0) } }
        }
        var bonds: [Bond] = []
        var failures: [String] = []
        for (name, entry) in entries {
            switch entry {
            case let .bond(bond): bonds.append(bond)
            case let .unreadable(reason): failures.append("the bond file \(path(name)) \(reason); it is kept")
            }
        }
        return (bonds, failures)
    }

    /// The bond files in the directory (none when there is no directory yet); `nil` when it
    /// cannot be listed.
    private func fileNames() -> [String]? {
        do {
            // Temporary files of a write cut short and files set aside do not end in ".json".
            return try FileManager.default.contentsOfDirectory(atPath: directory).filter { Self.identities(fileName: $0) != nil }
        } catch {
            guard FileManager.default.fileExists(atPath: directory) else { return [] }
            logger.error("cannot list the bonds in \(directory): \(error)")
            return nil
        }
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

    /// The bond in the file: `nil` when there is none, or it cannot be trusted (it is then set
    /// aside); ``Entry/unreadable(_:)`` when the system cannot read it now (it is kept).
    private func read(_ fileName: String) -> Entry? {
        let file = path(fileName)
        fileReads += 1
        let bytes: [UInt8]
        switch PrivateFile.contents(of: file, maximumSize: Self.maximumFileSize, open: open) {
        case .missing: return nil
        case let .untrusted(reason): return setAside(file, reason)
        case let .unreadable(reason): return .unreadable(reason)
        case let .bytes(read): bytes = read
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
        return .bond(record.bond)
    }

    /// Logs why the file is not trusted and sets it aside. Returns `nil`, the bond the caller
    /// does not get.
    private func setAside(_ file: String, _ reason: String) -> Entry? {
        if let target = PrivateFile.setAside(file) {
            logger.warning("bond file \(file) ignored (\(reason)); moved to \(target)")
        } else {
            logger.warning("bond file \(file) ignored (\(reason)) and removed: it could not be moved aside")
        }
        return nil
    }

    // MARK: Writing

    private func prepareDirectory() throws(BondStoreError) {
        do {
            try PrivateFile.prepareDirectory(directory)
        } catch {
            throw .writeFailed(error.reason)
        }
    }

    private func writeAtomically(_ data: Data, to file: String) throws(BondStoreError) {
        do {
            try PrivateFile.writeAtomically(data, to: file)
        } catch {
            throw .writeFailed(error.reason)
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
