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
protocol ListenSubscription: Sendable {
    func cancel()
}

/// Which characteristics Bluejay listens to, and who receives their values: the
/// bookkeeping of listens, without I/O. One record per characteristic, as in Bluejay.
struct ListenRegistry: Sendable {
    struct Record: Sendable {
        /// `nil` for a listen restored after a restart or kept across a reconnection whose
        /// callback has not been installed again: its values go to the ``ListenRestorer``.
        var handler: ListenHandler?
        /// Takes a batch of values at once, when the listen's API has a cheaper path for that
        /// than one ``handler`` call per value.
        var batchHandler: ListenBatchHandler?
        /// The option the listen was installed with (the existing listen's option decides).
        var option: MultipleListenOption
        /// Created by a background task's synchronous listen: never persisted.
        var isSynchronous: Bool
        /// Changes each time the handler changes, so that late results of an old listen
        /// request do not touch a newer one.
        var generation: UInt64
        /// The notifications are enabled on the current link.
        var isSubscribed = false
        /// The current subscription, which hands the values over.
        var subscription: (any ListenSubscription)?
        /// Called when the listen ends, whichever way (the `async` API finishes its stream).
        var onRemoval: (@Sendable () -> Void)?
    }

    /// What ``admit(_:handler:option:synchronous:)`` decided.
    enum Admission: Sendable {
        /// A new listen; enable notifications.
        case installed(generation: UInt64)
        /// The handler replaced an existing one (given back, to be told, with its removal callback).
        case replaced(previous: ListenHandler?, previousRemoval: (@Sendable () -> Void)?, generation: UInt64)
        /// The existing listen traps new ones.
        case trapped
    }

    private(set) var records: [CharacteristicIdentifier: Record] = [:]
    private var nextGeneration: UInt64 = 0

    /// A listen request.
    mutating func admit(_ characteristic: CharacteristicIdentifier, handler: @escaping ListenHandler, batchHandler: ListenBatchHandler? = nil,
                        option: MultipleListenOption, synchronous: Bool = false,
                        onRemoval: (@Sendable () -> Void)? = nil) -> Admission {
        nextGeneration += 1
        let generation = nextGeneration
        guard var record = records[characteristic] else {
            records[characteristic] = Record(handler: handler, batchHandler: batchHandler, option: option, isSynchronous: synchronous,
                                             generation: generation, onRemoval: onRemoval)
            return .installed(generation: generation)
        }
        if record.handler != nil, record.option == .trap { return .trapped }
        let previous = record.handler
        let previousRemoval = record.onRemoval
        record.handler = handler
        record.batchHandler = batchHandler
        record.onRemoval = onRemoval
        record.generation = generation
        record.isSynchronous = synchronous
        if previous == nil { record.option = option }
        records[characteristic] = record
        return .replaced(previous: previous, previousRemoval: previousRemoval, generation: generation)
    }

    /// Listens carried over without a callback (restored from disk): their values go to the
    /// ``ListenRestorer``. Characteristics that already have a listen are left alone.
    /// Returns the ones added.
    mutating func addRestored(_ characteristics: [CharacteristicIdentifier]) -> [CharacteristicIdentifier] {
        var added: [CharacteristicIdentifier] = []
        for characteristic in characteristics where records[characteristic] == nil {
            nextGeneration += 1
            records[characteristic] = Record(handler: nil, option: .replaceable, isSynchronous: false, generation: nextGeneration)
            added.append(characteristic)
        }
        return added
    }

    /// Removes the listen; with a generation, only if it is still that one.
    @discardableResult
    mutating func remove(_ characteristic: CharacteristicIdentifier, generation: UInt64? = nil) -> Record? {
        guard let record = records[characteristic] else { return nil }
        if let generation, record.generation != generation { return nil }
        records[characteristic] = nil
        return record
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
    /// Part G, 3.3.3.3). Synchronous listens end; the others stay for the reconnection.
    /// Returns the synchronous ones that ended.
    mutating func linkDidDrop() -> [Record] {
        var ended: [Record] = []
        for (characteristic, var record) in records {
            record.subscription?.cancel()
            record.subscription = nil
            record.isSubscribed = false
            if record.isSynchronous {
                records[characteristic] = nil
                ended.append(record)
            } else {
                records[characteristic] = record
            }
        }
        return ended
    }

    func record(for characteristic: CharacteristicIdentifier) -> Record? { records[characteristic] }

    func contains(_ characteristic: CharacteristicIdentifier) -> Bool { records[characteristic] != nil }

    /// The listens to persist for restoration: not the synchronous ones.
    var persistable: [CharacteristicIdentifier] {
        records.filter { !$0.value.isSynchronous }.keys.sorted { $0.description < $1.description }
    }

    /// The listens to enable again after a reconnection.
    var toResubscribe: [CharacteristicIdentifier] {
        records.filter { !$0.value.isSubscribed }.keys.sorted { $0.description < $1.description }
    }
}
