import Synchronization

/// Hands every element to each of its streams: the listeners of an object's events. A stream
/// leaves when its consumer stops; ``finish()`` ends them all, and streams made afterwards end
/// at once. Elements yielded from one context keep their order in every stream.
///
/// Each stream holds at most ``bufferLimit`` elements its consumer has not taken; past that
/// the oldest are dropped (and counted in ``droppedCount``). The events are what a peer or a
/// controller makes happen, and a listener that stops reading without ending its stream must
/// not make memory grow without bound; a listener that catches up is told the latest events,
/// which describe the state as it is now.
public final class AsyncStreamFanOut<Element: Sendable>: Sendable {
    private struct State {
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        var isFinished = false
    }

    /// The default ``bufferLimit``: 1,024 events, far more than a listener that keeps up
    /// ever has waiting.
    public static var defaultBufferLimit: Int { 1_024 }

    /// How many elements each stream holds for its consumer.
    public let bufferLimit: Int
    private let state = Mutex(State())
    private let dropped = Atomic<Int>(0)

    /// - Parameter bufferLimit: how many elements each stream holds for a consumer that
    ///   falls behind (at least 1); the oldest are dropped past it.
    public init(bufferLimit: Int = AsyncStreamFanOut.defaultBufferLimit) {
        self.bufferLimit = Swift.max(1, bufferLimit)
    }

    /// How many elements were dropped so far, over every stream, because a consumer was
    /// ``bufferLimit`` elements behind.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// A new stream of the elements yielded from now on.
    public func makeStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let id = state.withLock { state -> UInt64? in
            guard !state.isFinished else { return nil }
            state.nextID += 1
            state.continuations[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Hands `element` to every stream.
    public func yield(_ element: Element) {
        for continuation in state.withLock({ Array($0.continuations.values) }) {
            if case .dropped = continuation.yield(element) { dropped.add(1, ordering: .relaxed) }
        }
    }

    /// Ends every stream, now and to come.
    public func finish() {
        let continuations = state.withLock { state -> [AsyncStream<Element>.Continuation] in
            state.isFinished = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        continuations.forEach { $0.finish() }
    }

    /// Whether any stream is listening.
    public var isEmpty: Bool { state.withLock { $0.continuations.isEmpty } }
}
