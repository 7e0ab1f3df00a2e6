import BluetoothHost
import Foundation

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
        /// The file could not be read now (out of file descriptors, an I/O error): why. It is
        /// kept for the next start.
        case unreadable(String)
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
        let bytes: [UInt8]
        switch PrivateFile.contents(of: fileURL.path, maximumSize: Self.maximumFileSize) {
        case .missing: return .nothing
        case let .untrusted(reason): return setAside(reason)
        case let .unreadable(reason): return .unreadable(reason)
        case let .bytes(read): bytes = read
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

    private func setAside(_ reason: String) -> Loaded {
        .setAside(reason: reason, movedTo: PrivateFile.setAside(fileURL.path).map { URL(fileURLWithPath: $0) })
    }

    private func prepareDirectory() throws(BluejayError) {
        do {
            try PrivateFile.prepareDirectory(directoryURL.path)
        } catch {
            throw .restorationFailed(error.reason)
        }
    }

    private func writeAtomically(_ data: Data) throws(BluejayError) {
        do {
            try PrivateFile.writeAtomically(data, to: fileURL.path)
        } catch {
            throw .restorationFailed(error.reason)
        }
    }
}
