// The restoration store and record are internal to Bluejay (the file format is not API):
// this target reaches them through `@testable import`, which the fuzz build allows (a debug
// build, where SwiftPM enables testing).
@testable import Bluejay
import Foundation
import FuzzSupport

/// The restoration file, as a previous process (or anyone who can write the file) left it:
/// loading never traps, whatever the bytes; a record that loads yields the peripheral and the
/// listens Bluejay restores (each with a usable identifier or a typed error), and saving it
/// gives a file that loads as the same record.
///
/// Input: the file's bytes.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-fuzz-restoration-\(getpid())")
let store = RestorationStore(directory: directory, restoreIdentifier: "fuzz")
let copy = RestorationStore(directory: directory, restoreIdentifier: "fuzz-copy")

runFuzzer { input in
    // A fresh directory per input: a file that cannot be trusted is set aside next to it.
    try? FileManager.default.removeItem(at: directory)
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(input.rest()).write(to: store.fileURL)
    } catch {
        fuzzFailure("cannot write the input to \(store.fileURL.path): \(error)")
    }
    guard case let .record(record) = store.load() else { return }

    // What restoring does with it: the peripheral to reconnect to, the listens to enable.
    _ = record.peripheralIdentifier?.description
    var listens = ListenRegistry()
    let added = listens.addRestored(record.listens)
    for listen in added {
        _ = listen.description
        _ = try? listen.requireUUID()
        _ = try? listen.service.requireUUID()
    }
    _ = listens.persistable
    _ = listens.toResubscribe

    do {
        try copy.save(record)
        let again = copy.load()
        fuzzCheck(again == .record(record) || (record.isEmpty && again == .nothing), "record \(record) saves and loads as \(again)")
    } catch {
        fuzzFailure("record \(record) does not save and load: \(error)")
    }
}
