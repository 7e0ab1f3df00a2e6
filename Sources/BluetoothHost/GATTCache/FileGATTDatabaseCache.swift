import BluetoothCore
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cached databases on disk: one JSON file per peer identity in a directory,
/// `<peer>-<type>.json`, handled by `PrivateFile` as bonds are (a `0700` directory, `0600`
/// files written atomically, nothing trusted when read back). A file that is not a regular
/// file of this user, larger than ``maximumFileSize`` or not a cached database of the peer
/// its name says is set aside (`<name>.corrupt-<UTC time>`): the peer is then discovered
/// again. At most ``capacity`` files are kept (the least recently written goes first).
public actor FileGATTDatabaseCache: GATTDatabaseCache {
    /// The largest file read: 512 KiB (a database of a thousand characteristics takes
    /// about 200 KiB of JSON).
    public static let maximumFileSize = 512 * 1024

    public nonisolated let directory: String
    public nonisolated let capacity: Int
    private let logger: Logger

    public init(directory: String, capacity: Int = 256, logger: Logger) {
        self.directory = directory
        self.capacity = max(1, capacity)
        self.logger = logger
    }

    /// Where the cache goes beside a ``FileBondStore``: `<bonds>/gatt-cache`.
    public static func defaultDirectory(bondDirectory: String) -> String {
        URL(fileURLWithPath: bondDirectory, isDirectory: true).appendingPathComponent("gatt-cache", isDirectory: true).path
    }

    public func database(for peer: DeviceAddress) -> GATTCachedDatabase? {
        let key = peer.identityKey
        let path = path(Self.fileName(key))
        switch PrivateFile.contents(of: path, maximumSize: Self.maximumFileSize) {
        case .missing:
            return nil
        case let .untrusted(reason):
            setAside(path, reason: reason)
            return nil
        case let .unreadable(reason):
            // Perhaps good: kept, and the peer discovered this time.
            logger.warning("cached database \(path) \(reason): not used this time")
            return nil
        case let .bytes(bytes):
            do {
                let database = try JSONDecoder().decode(GATTCachedDatabase.self, from: Data(bytes))
                guard database.peer.identityKey == key else {
                    setAside(path, reason: "holds the database of \(database.peer)")
                    return nil
                }
                return database
            } catch {
                setAside(path, reason: "not a cached database: \(error)")
                return nil
            }
        }
    }

    public func save(_ database: GATTCachedDatabase) {
        let key = database.peer.identityKey
        do {
            try PrivateFile.prepareDirectory(directory)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(database)
            guard data.count <= Self.maximumFileSize else {
                logger.warning("the database of \(key) takes \(data.count) bytes, more than \(Self.maximumFileSize): not cached")
                return
            }
            try PrivateFile.writeAtomically(data, to: path(Self.fileName(key)))
            trim()
        } catch {
            logger.warning("cannot cache the database of \(key): \(error)")
        }
    }

    public func removeDatabase(for peer: DeviceAddress) {
        let path = path(Self.fileName(peer.identityKey))
        if unlink(path) != 0, errno != ENOENT {
            logger.warning("cannot remove \(path): \(PrivateFile.describe(errno))")
        }
    }

    /// The cache files, by file name.
    public func fileNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func fileName(_ peer: DeviceAddress) -> String {
        Hex.encode(peer.address.bytes) + (peer.type.base == .public ? "-public" : "-random") + ".json"
    }

    private func path(_ fileName: String) -> String {
        URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(fileName).path
    }

    private func setAside(_ path: String, reason: String) {
        let target = PrivateFile.setAside(path)
        logger.warning("cached database \(path) \(reason): set aside\(target.map { " as \($0)" } ?? "")")
    }

    /// Removes the least recently written files beyond ``capacity``.
    private func trim() {
        let names = fileNames()
        guard names.count > capacity else { return }
        let dated = names.map { name -> (String, Date) in
            let path = path(name)
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
            return (path, modified ?? .distantPast)
        }.sorted { $0.1 < $1.1 }
        for (path, _) in dated.prefix(names.count - capacity) { _ = unlink(path) }
    }
}
