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
/// crash. The files are handled by `PrivateFile`, as Bluejay's restoration store's are.
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
        throw .writeFailed("cannot remove \(file): \(PrivateFile.describe(error))")
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
        let bytes: [UInt8]
        switch PrivateFile.contents(of: file, maximumSize: Self.maximumFileSize) {
        case .missing: return nil
        case let .untrusted(reason): return setAside(file, reason)
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
        return record.bond
    }

    /// Logs why the file is not trusted and sets it aside. Returns `nil`, the bond the caller
    /// does not get.
    private func setAside(_ file: String, _ reason: String) -> Bond? {
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
