import BluetoothHost
import Foundation

extension Bluejay {
    /// At start, with restoration on: reconnects to the peripheral the previous process
    /// left connected, before any other request runs.
    func beginRestoration() {
        guard let context = state.withLock({ $0.restoration }) else { return }
        let record: RestorationRecord
        switch context.store.load() {
        case .nothing:
            log(.debug, "nothing to restore for \"\(context.config.restoreIdentifier)\"")
            return
        case let .setAside(reason, movedTo):
            let disposal = movedTo.map { "moved to \($0.path)" } ?? "removed"
            log(.error, "the restoration file \(context.store.fileURL.path) is not trusted (\(reason)): \(disposal); starting without restoration")
            return
        case let .unreadable(reason):
            log(.error, "the restoration file \(context.store.fileURL.path) \(reason): kept; starting without restoration")
            return
        case let .record(loaded):
            record = loaded
        }
        guard let peripheral = record.peripheralIdentifier else {
            log(.debug, "nothing to restore for \"\(context.config.restoreIdentifier)\"")
            return
        }
        log(.info, "restoring the connection to \(peripheral) with \(record.listens.count) listen(s) from \(context.store.fileURL.path)")
        requestConnection(to: peripheral, timeout: context.config.reconnectTimeout, purpose: .restore(record.listens), atFront: true) {
            [self] result in
            if case .success = result { self.reportRestoration(of: peripheral, error: nil) }
        }
    }

    /// Tells the ``BackgroundRestorer`` how restoration went.
    func reportRestoration(of peripheral: PeripheralIdentifier, error: BluejayError?) {
        guard let restorer = state.withLock({ $0.restoration?.config.backgroundRestorer }) else { return }
        onCallbackQueue {
            let completion = error.map { restorer.didFailToRestoreConnection(to: peripheral, error: $0) }
                ?? restorer.didRestoreConnection(to: peripheral)
            if case let .callback(callback) = completion { callback() }
        }
    }

    /// Persists the connected peripheral and its listens (restoration on).
    func saveCurrentRestorationState() {
        restorationWrites.withLock { _ in
            let record = state.withLock { state -> RestorationRecord? in
                guard state.restoration != nil, state.lifecycle == .running else { return nil }
                guard let link = state.connectedLink else { return nil }
                return RestorationRecord(peripheral: link.identifier.stringValue, listens: state.listens.persistable)
            }
            if let record { writeRestoration(record) }
        }
    }

    /// Writes the restoration record (restoration on).
    func saveRestoration(_ record: RestorationRecord) {
        restorationWrites.withLock { _ in writeRestoration(record) }
    }

    private func writeRestoration(_ record: RestorationRecord) {
        guard let store = state.withLock({ $0.restoration?.store }) else { return }
        do {
            try store.save(record)
        } catch {
            log(.error, "\(error)")
        }
    }
}
