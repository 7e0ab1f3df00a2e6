import BluetoothCore
import Foundation
import Logging

/// Static addresses on disk: one private JSON file, `static-addresses.json`, mapping each
/// adapter's name to its address, kept beside the bonds (a ``FileBondStore``'s directory)
/// because bonds are worth nothing without the identity they were made under. Written and read
/// back like a bond file (`PrivateFile`: a `0700` directory, a `0600` file written atomically;
/// a file that cannot be trusted, is too large or holds anything but valid static random
/// addresses is set aside as `<name>.corrupt-<UTC time>`, and the host generates a new address).
public actor FileStaticAddressStore: StaticAddressStore {
    /// The largest file read: 64 KiB.
    public static let maximumFileSize = 64 * 1024
    /// The most adapters kept; a new one past it replaces the file's first entry in name order.
    public static let maximumAdapters = 256
    /// The file's name in its directory.
    public static let fileName = "static-addresses.json"

    /// The directory the file is in.
    public nonisolated let directory: String
    private let logger: Logger

    /// How the file is opened (tests make it fail as the system may).
    private let open: PrivateFile.Opener

    public init(directory: String, logger: Logger) {
        self.init(directory: directory, logger: logger, open: PrivateFile.systemOpen)
    }

    package init(directory: String, logger: Logger, open: @escaping PrivateFile.Opener) {
        self.directory = directory
        self.logger = logger
        self.open = open
    }

    public nonisolated var keepsAddressesAcrossRuns: Bool { true }

    /// The file's path.
    public nonisolated var path: String {
        URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(Self.fileName).path
    }

    public func address(forAdapter adapter: String) throws -> BluetoothAddress? {
        try load()[adapter]
    }

    public func save(_ address: BluetoothAddress, forAdapter adapter: String) throws {
        guard address.isStaticRandom else { throw BondStoreError.writeFailed("\(address) is not a static random address") }
        var addresses = try load()
        if addresses[adapter] == nil, addresses.count >= Self.maximumAdapters, let first = addresses.keys.sorted().first {
            addresses[first] = nil
        }
        addresses[adapter] = address
        do {
            try PrivateFile.prepareDirectory(directory)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try PrivateFile.writeAtomically(try encoder.encode(StaticAddressRecord(addresses: addresses)), to: path)
        } catch let failure as PrivateFile.Failure {
            throw BondStoreError.writeFailed(failure.reason)
        } catch {
            throw BondStoreError.writeFailed("cannot write \(path): \(error)")
        }
    }

    /// The addresses in the file; none when there is no file, or one that cannot be trusted
    /// (set aside). A file that cannot be read now for a system reason is kept, and
    /// ``BondStoreError/readFailed(_:)`` thrown: replacing it would change the identity that
    /// every bond was made under.
    private func load() throws -> [String: BluetoothAddress] {
        let bytes: [UInt8]
        switch PrivateFile.contents(of: path, maximumSize: Self.maximumFileSize, open: open) {
        case .missing: return [:]
        case let .untrusted(reason): return setAside(reason)
        case let .unreadable(reason): throw BondStoreError.readFailed(reason)
        case let .bytes(read): bytes = read
        }
        let record: StaticAddressRecord
        do {
            record = try JSONDecoder().decode(StaticAddressRecord.self, from: Data(bytes))
        } catch {
            return setAside("not a list of static addresses: \(error)")
        }
        guard record.version == StaticAddressRecord.currentVersion else {
            return setAside("version \(record.version), not \(StaticAddressRecord.currentVersion)")
        }
        if let invalid = record.addresses.first(where: { !$0.value.isStaticRandom }) {
            return setAside("\(invalid.value) (for \(invalid.key)) is not a static random address")
        }
        return record.addresses
    }

    private func setAside(_ reason: String) -> [String: BluetoothAddress] {
        if let target = PrivateFile.setAside(path) {
            logger.warning("static address file \(path) ignored (\(reason)); moved to \(target)")
        } else {
            logger.warning("static address file \(path) ignored (\(reason)) and removed: it could not be moved aside")
        }
        return [:]
    }
}

/// What the static address file holds: a format version and the addresses by adapter.
struct StaticAddressRecord: Codable, Sendable {
    static let currentVersion = 1

    var version = Self.currentVersion
    var addresses: [String: BluetoothAddress]

    init(addresses: [String: BluetoothAddress]) { self.addresses = addresses }
}
