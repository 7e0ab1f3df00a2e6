import BluetoothHost
import Foundation

/// What Bluejay persists for restoration: the connected peripheral and its active listens.
struct RestorationRecord: Codable, Sendable, Equatable {
    var version = 1
    /// ``PeripheralIdentifier/stringValue`` of the connected peripheral.
    var peripheral: String?
    var listens: [CharacteristicIdentifier] = []

    var peripheralIdentifier: PeripheralIdentifier? { peripheral.flatMap(PeripheralIdentifier.init(string:)) }
    var isEmpty: Bool { peripheral == nil && listens.isEmpty }
}

/// One JSON file per restore identifier, `<directory>/<identifier>.json`, written atomically.
struct RestorationStore: Sendable {
    let fileURL: URL

    init(directory: URL, restoreIdentifier: String) {
        // Keep the identifier readable but never let it name another directory.
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
        let safe = String(restoreIdentifier.map { allowed.contains($0) ? $0 : "_" })
        let name = safe.isEmpty || safe.allSatisfy({ $0 == "." }) ? "_" : safe
        fileURL = directory.appendingPathComponent(name + ".json")
    }

    /// The record, or `nil` when there is none. A file that cannot be read or decoded throws.
    func load() throws(BluejayError) -> RestorationRecord? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        do {
            let data = try Data(contentsOf: fileURL)
            return try JSONDecoder().decode(RestorationRecord.self, from: data)
        } catch {
            throw .restorationFailed("cannot read \(fileURL.path): \(error)")
        }
    }

    /// Writes the record; an empty record removes the file.
    func save(_ record: RestorationRecord) throws(BluejayError) {
        do {
            if record.isEmpty {
                if FileManager.default.fileExists(atPath: fileURL.path) { try FileManager.default.removeItem(at: fileURL) }
                return
            }
            try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(record).write(to: fileURL, options: .atomic)
        } catch {
            throw .restorationFailed("cannot write \(fileURL.path): \(error)")
        }
    }
}
