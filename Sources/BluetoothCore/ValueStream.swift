import Synchronization

/// An asynchronous sequence of values that synchronous code pushes (a transport's reader
/// thread, a callback), for one consumer.
///
/// It is built for batches: the producer hands over a batch with one lock
/// (``Continuation/yield(contentsOf:)``), and the consumer takes everything buffered in one
/// go and iterates it without locking, so a batch costs at most one wake-up however many
/// values it holds. Its fast paths are inlinable, so they run specialized for the element
/// type, with no generic metadata looked up per value.
///
/// It holds at most `limit` values the consumer has not taken; past that the newest are
/// dropped and the yield says how many (a peer's notifications have no flow control, and a
/// consumer that stops reading must not make memory grow without bound).
///
/// The stream ends once the consumer has taken what was buffered before
/// ``Continuation/finish(throwing:)`` (with its error, if any). When the consumer ends it
/// first (it breaks out of its loop, drops the stream, or its task is cancelled while it
/// waits), ``Continuation/onTermination`` runs, once; it also runs at `finish`.
public struct ValueStream<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    @usableFromInline let consumer: Consumer

    @usableFromInline init(consumer: Consumer) {
        self.consumer = consumer
    }

    /// A stream and the continuation that feeds it.
    public static func makeStream(of _: Element.Type = Element.self, limit: Int = .max) -> (stream: ValueStream, continuation: Continuation) {
        let storage = Storage(limit: Swift.max(1, limit))
        return (ValueStream(consumer: Consumer(storage)), Continuation(storage: storage))
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: consumer)
    }

    /// What a yield did.
    public enum YieldResult: Sendable, Equatable {
        /// Every value was buffered.
        case enqueued
        /// The buffer was full: this many of the newest values were dropped.
        case dropped(Int)
        /// The stream has ended; nothing was kept.
        case terminated
    }

    /// The consumer's iterator: it takes the buffered values in one go, then hands them out.
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let consumer: Consumer
        @usableFromInline var taken: [Element] = []
        @usableFromInline var index = 0

        @usableFromInline init(consumer: Consumer) {
            self.consumer = consumer
        }

        @inlinable
        public mutating func next() async throws -> Element? {
            if index == taken.count {
                taken = []
                index = 0
                guard let batch = try await consumer.storage.take() else { return nil }
                taken = batch
            }
            defer { index += 1 }
            return taken[index]
        }
    }

    /// The producer's end.
    public struct Continuation: Sendable {
        @usableFromInline let storage: Storage

        @usableFromInline init(storage: Storage) {
            self.storage = storage
        }

        /// Buffers `values` in order, waking the consumer if it waits.
        @inlinable @discardableResult
        public func yield(contentsOf values: some Collection<Element>) -> YieldResult {
            storage.yield(contentsOf: values)
        }

        /// Buffers one value.
        @inlinable @discardableResult
        public func yield(_ value: Element) -> YieldResult {
            storage.yield(contentsOf: CollectionOfOne(value))
        }

        /// Ends the stream after the values buffered so far; with an error, the consumer's
        /// next call after them throws it. Later calls have no effect.
        public func finish(throwing error: (any Error)? = nil) {
            storage.finish(error)
        }

        /// Runs once when the stream ends: at ``finish(throwing:)``, or when the consumer
        /// ends it first. Set it before the consumer can end it; set after the end, it runs
        /// at once.
        public var onTermination: (@Sendable () -> Void)? {
            get { storage.onTermination }
            nonmutating set { storage.setOnTermination(newValue) }
        }

        /// Whether the stream has ended (finished, or the consumer went away).
        public var isTerminated: Bool { storage.isTerminated }
    }

    /// The consumer's side: when the stream and its iterators are gone, the stream ends.
    @usableFromInline final class Consumer: Sendable {
        @usableFromInline let storage: Storage

        init(_ storage: Storage) {
            self.storage = storage
        }

        deinit { storage.terminate() }
    }

    @usableFromInline final class Storage: Sendable {
        @usableFromInline enum Ending {
            case finished
            case failed(any Error)
            /// The consumer went away (or was cancelled).
            case terminated
        }

        @usableFromInline struct State {
            @usableFromInline var buffer: [Element] = []
            @usableFromInline var waiter: CheckedContinuation<[Element]?, any Error>?
            @usableFromInline var ending: Ending?
            @usableFromInline var onTermination: (@Sendable () -> Void)?

            @usableFromInline init() {}
        }

        @usableFromInline let limit: Int
        @usableFromInline let state = Mutex(State())

        init(limit: Int) {
            self.limit = limit
        }

        @inlinable
        func yield(contentsOf values: some Collection<Element>) -> YieldResult {
            let (waiter, batch, result) = state.withLock { state -> (CheckedContinuation<[Element]?, any Error>?, [Element], YieldResult) in
                guard state.ending == nil else { return (nil, [], .terminated) }
                let room = limit - state.buffer.count
                var result = YieldResult.enqueued
                if values.count <= room {
                    state.buffer.append(contentsOf: values)
                } else {
                    state.buffer.append(contentsOf: values.prefix(Swift.max(0, room)))
                    result = .dropped(values.count - Swift.max(0, room))
                }
                guard let waiter = state.waiter, !state.buffer.isEmpty else { return (nil, [], result) }
                state.waiter = nil
                let batch = state.buffer
                state.buffer = []
                return (waiter, batch, result)
            }
            waiter?.resume(returning: batch)
            return result
        }

        /// Everything buffered, waiting for something if nothing is; `nil` at the end.
        @inlinable
        func take() async throws -> [Element]? {
            if let batch = state.withLock({ state -> [Element]? in
                guard !state.buffer.isEmpty else { return nil }
                let batch = state.buffer
                state.buffer = []
                return batch
            }) {
                return batch
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Element]?, any Error>) in
                    let ready = state.withLock { state -> Result<[Element]?, any Error>? in
                        if !state.buffer.isEmpty {
                            let batch = state.buffer
                            state.buffer = []
                            return .success(batch)
                        }
                        switch state.ending {
                        case nil:
                            state.waiter = continuation
                            return nil
                        case let .failed(error)?:
                            // Thrown once; the stream is over after it.
                            state.ending = .finished
                            return .failure(error)
                        case .finished?, .terminated?:
                            return .success(nil)
                        }
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                terminate()
            }
        }

        func finish(_ error: (any Error)?) {
            let (waiter, onTermination) = state.withLock { state -> (CheckedContinuation<[Element]?, any Error>?, (@Sendable () -> Void)?) in
                guard state.ending == nil else { return (nil, nil) }
                state.ending = error.map { .failed($0) } ?? .finished
                defer { state.onTermination = nil }
                // A waiting consumer has taken everything: it hears of the end now.
                guard let waiter = state.waiter else { return (nil, state.onTermination) }
                state.waiter = nil
                if error != nil { state.ending = .finished }
                return (waiter, state.onTermination)
            }
            if let waiter {
                if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
            }
            onTermination?()
        }

        /// The consumer ended the stream (it is gone, or its task was cancelled).
        @usableFromInline
        func terminate() {
            let (waiter, onTermination) = state.withLock { state -> (CheckedContinuation<[Element]?, any Error>?, (@Sendable () -> Void)?) in
                state.buffer = []
                guard state.ending == nil else { return (nil, nil) }
                state.ending = .terminated
                defer {
                    state.waiter = nil
                    state.onTermination = nil
                }
                return (state.waiter, state.onTermination)
            }
            waiter?.resume(returning: nil)
            onTermination?()
        }

        var onTermination: (@Sendable () -> Void)? { state.withLock { $0.onTermination } }

        func setOnTermination(_ handler: (@Sendable () -> Void)?) {
            let runNow = state.withLock { state -> Bool in
                guard state.ending == nil else { return true }
                state.onTermination = handler
                return false
            }
            if runNow { handler?() }
        }

        var isTerminated: Bool { state.withLock { $0.ending != nil } }
    }
}
