import Synchronization

/// Hands every element to each of its streams: the listeners of an object's events. A stream
/// leaves when its consumer stops; ``finish()`` ends them all, and streams made afterwards end
/// at once. Elements yielded from one context keep their order in every stream.
public final class AsyncStreamFanOut<Element: Sendable>: Sendable {
    private struct State {
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        var isFinished = false
    }

    private let state = Mutex(State())

    public init() {}

    /// A new stream of the elements yielded from now on.
    public func makeStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .unbounded)
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

    public func yield(_ element: Element) {
        for continuation in state.withLock({ Array($0.continuations.values) }) { continuation.yield(element) }
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
