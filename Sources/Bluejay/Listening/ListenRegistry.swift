import Foundation

/// Receives one notification's bytes, or an error, for one listen. Installed by the API
/// that created the listen (it decodes and hops to the right queue itself).
typealias ListenHandler = @Sendable (Result<Data, BluejayError>) -> Void

/// Receives the values of one transport batch for a listen, at once (the callback API hops
/// to its queue once for them).
typealias ListenBatchHandler = @Sendable ([Data]) -> Void

/// Who takes a listen's values: its batch path, its per-value handler, or (a listen without
/// a callback) the listen restorer on the callback queue.
enum ListenReceiver: Sendable {
    case batch(ListenBatchHandler)
    case each(ListenHandler)
    case restorer((any ListenRestorer)?, DispatchQueue)
}

/// What keeps a listen's values coming; cancelling it stops them at once.
typealias ListenSubscription = CentralSubscription

/// Which characteristics Bluejay listens to, and who receives their values: the
/// bookkeeping of listens, without I/O. One record per characteristic (one subscription),
/// holding one listener, or several when they joined with ``MultipleListenOption/shared``.
struct ListenRegistry: Sendable {
    /// One app listen on a characteristic.
    struct Listener: Sendable {
        /// Identifies this listener, so that late results of an old listen request, or the end
        /// of one listener, do not touch another.
        let id: UInt64
        var handler: ListenHandler
        /// Takes a batch of values at once, when the listen's API has a cheaper path for that
        /// than one ``handler`` call per value.
        var batchHandler: ListenBatchHandler?
        /// The option the listen was installed with (the oldest listener's option decides).
        var option: MultipleListenOption
        /// Created by a background task's synchronous listen: never persisted.
        var isSynchronous: Bool
        /// Called when the listen ends, whichever way (the `async` API finishes its stream).
        var onRemoval: (@Sendable () -> Void)?

        /// Tells the listener it ended, with `error` if one is given.
        func end(with error: BluejayError?) {
            if let error { handler(.failure(error)) }
            onRemoval?()
        }
    }

    struct Record: Sendable {
        /// Empty for a listen restored after a restart or kept across a reconnection whose
        /// callback has not been installed again: its values go to the ``ListenRestorer``.
        var listeners: [Listener]
        /// The notifications are enabled on the current link.
        var isSubscribed = false
        /// The current subscription, which hands the values over.
        var subscription: (any ListenSubscription)?

        /// The option of the oldest listener, which decides what a new listen does.
        var option: MultipleListenOption? { listeners.first?.option }
        var handlers: [ListenHandler] { listeners.map(\.handler) }
        /// Every listener is a background task's synchronous one.
        var isSynchronous: Bool { !listeners.isEmpty && listeners.allSatisfy(\.isSynchronous) }

        /// Tells every listener it ended.
        func end(with error: BluejayError?) { listeners.forEach { $0.end(with: error) } }
    }

    /// What ``admit(_:handler:batchHandler:option:synchronous:onRemoval:)`` decided.
    enum Admission: Sendable {
        /// The first listen; enable notifications.
        case installed(id: UInt64)
        /// Joined the existing shared listeners (the notifications are on, or being enabled).
        case joined(id: UInt64)
        /// Replaced the existing listeners (given back, to be told).
        case replaced(previous: [Listener], id: UInt64)
        /// The existing listen traps new ones.
        case trapped
    }

    /// What ``remove(_:listener:)`` took out.
    struct Removal: Sendable {
        /// The listeners that ended.
        var listeners: [Listener]
        /// The characteristic's whole record, when no listener is left: its notifications go off.
        var record: Record?
    }

    private(set) var records: [CharacteristicIdentifier: Record] = [:]
    private var nextID: UInt64 = 0

    /// A listen request.
    mutating func admit(_ characteristic: CharacteristicIdentifier, handler: @escaping ListenHandler, batchHandler: ListenBatchHandler? = nil,
                        option: MultipleListenOption, synchronous: Bool = false,
                        onRemoval: (@Sendable () -> Void)? = nil) -> Admission {
        nextID += 1
        let listener = Listener(id: nextID, handler: handler, batchHandler: batchHandler, option: option, isSynchronous: synchronous,
                                onRemoval: onRemoval)
        guard var record = records[characteristic] else {
            records[characteristic] = Record(listeners: [listener])
            return .installed(id: listener.id)
        }
        let previous = record.listeners
        switch record.option {
        case .trap?:
            return .trapped
        case .shared?:
            record.listeners.append(listener)
            records[characteristic] = record
            return .joined(id: listener.id)
        case .replaceable?, nil:
            // A replaced listen's option stays: the next listen replaces this one in turn.
            var listener = listener
            if let option = record.option { listener.option = option }
            record.listeners = [listener]
            records[characteristic] = record
            return .replaced(previous: previous, id: listener.id)
        }
    }

    /// Listens carried over without a callback (restored from disk): their values go to the
    /// ``ListenRestorer``. Characteristics that already have a listen are left alone.
    /// Returns the ones added.
    mutating func addRestored(_ characteristics: [CharacteristicIdentifier]) -> [CharacteristicIdentifier] {
        var added: [CharacteristicIdentifier] = []
        for characteristic in characteristics where records[characteristic] == nil {
            records[characteristic] = Record(listeners: [])
            added.append(characteristic)
        }
        return added
    }

    /// Removes one listener (with `listener`, only if it is still there), or with `nil` the
    /// whole listen. The record goes with its last listener.
    @discardableResult
    mutating func remove(_ characteristic: CharacteristicIdentifier, listener: UInt64? = nil) -> Removal? {
        guard var record = records[characteristic] else { return nil }
        guard let listener else {
            records[characteristic] = nil
            return Removal(listeners: record.listeners, record: record)
        }
        guard let index = record.listeners.firstIndex(where: { $0.id == listener }) else { return nil }
        let removed = record.listeners.remove(at: index)
        if record.listeners.isEmpty {
            records[characteristic] = nil
            return Removal(listeners: [removed], record: record)
        }
        records[characteristic] = record
        return Removal(listeners: [removed], record: nil)
    }

    /// Removes every listen (expected disconnection, stop); returns them.
    mutating func removeAll() -> [CharacteristicIdentifier: Record] {
        defer { records.removeAll() }
        return records
    }

    /// Marks a subscription made or lost.
    mutating func setSubscribed(_ characteristic: CharacteristicIdentifier, subscription: (any ListenSubscription)?) {
        guard records[characteristic] != nil else { return }
        records[characteristic]?.subscription?.cancel()
        records[characteristic]?.subscription = subscription
        records[characteristic]?.isSubscribed = subscription != nil
    }

    /// The link dropped: no subscription survives it (the peer clears its Client
    /// Characteristic Configuration for a client that is not bonded, Core 6.0, Vol 3,
    /// Part G, 3.3.3.3). Synchronous listeners end; the others stay for the reconnection.
    /// Returns the synchronous ones that ended.
    mutating func linkDidDrop() -> [Listener] {
        var ended: [Listener] = []
        for (characteristic, var record) in records {
            record.subscription?.cancel()
            record.subscription = nil
            record.isSubscribed = false
            let hadListeners = !record.listeners.isEmpty
            ended += record.listeners.filter(\.isSynchronous)
            record.listeners.removeAll(where: \.isSynchronous)
            records[characteristic] = hadListeners && record.listeners.isEmpty ? nil : record
        }
        return ended
    }

    func record(for characteristic: CharacteristicIdentifier) -> Record? { records[characteristic] }

    func contains(_ characteristic: CharacteristicIdentifier) -> Bool { records[characteristic] != nil }

    /// Whether the listener is still listed on the characteristic.
    func contains(_ characteristic: CharacteristicIdentifier, listener: UInt64) -> Bool {
        records[characteristic]?.listeners.contains { $0.id == listener } ?? false
    }

    /// The listens to persist for restoration: not those of synchronous listeners only.
    var persistable: [CharacteristicIdentifier] {
        records.filter { !$0.value.isSynchronous }.keys.sorted { $0.description < $1.description }
    }

    /// The listens to enable again after a reconnection.
    var toResubscribe: [CharacteristicIdentifier] {
        records.filter { !$0.value.isSubscribed }.keys.sorted { $0.description < $1.description }
    }
}
