import BluetoothHost

/// Where Bluejay's link to its peripheral is: what ``Bluejay/peripheralStates()`` reports
/// (LittleBluetooth's peripheral state publisher).
public enum PeripheralState: Sendable, Equatable {
    /// No link, and no attempt.
    case disconnected
    /// A connection attempt is queued or running (requested, auto-reconnect or restoration).
    case connecting(PeripheralIdentifier)
    /// The link is up and its ATT MTU exchanged (listens are enabled again right after, and
    /// ``ConnectionEvent/connected(_:)`` follows once they are).
    case connected(PeripheralIdentifier)
    /// A disconnection the app asked for is in progress.
    case disconnecting(PeripheralIdentifier)

    init(_ link: LinkState) {
        switch link {
        case .idle: self = .disconnected
        case let .connecting(peripheral, _): self = .connecting(peripheral)
        case let .connected(link): self = .connected(link.identifier)
        case let .disconnecting(link): self = .disconnecting(link.identifier)
        }
    }
}

/// The streams of ``Bluejay/peripheralStates()``, kept in the engine state so that each change
/// of the link is handed over under the same lock that makes it, in order.
struct PeripheralStateListeners: Sendable {
    private var continuations: [UInt64: AsyncStream<PeripheralState>.Continuation] = [:]
    private var nextID: UInt64 = 0

    mutating func add(_ continuation: AsyncStream<PeripheralState>.Continuation) -> UInt64 {
        nextID += 1
        continuations[nextID] = continuation
        return nextID
    }

    mutating func remove(_ id: UInt64) {
        continuations[id] = nil
    }

    func publish(_ state: PeripheralState) {
        for continuation in continuations.values { continuation.yield(state) }
    }
}

extension Bluejay {
    /// The link's state now, then each change (LittleBluetooth's peripheral state stream):
    /// `.connecting` when an attempt is queued, `.connected` once the link is up,
    /// `.disconnecting` while a requested disconnection runs, `.disconnected`. The stream holds
    /// the latest 64 states for a consumer that falls behind and ends when the consumer stops.
    public func peripheralStates() -> AsyncStream<PeripheralState> {
        let (stream, continuation) = AsyncStream.makeStream(of: PeripheralState.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> UInt64 in
            continuation.yield(PeripheralState(state.link))
            return state.peripheralStateListeners.add(continuation)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.peripheralStateListeners.remove(id) }
        }
        return stream
    }

    /// The link's state now.
    public var peripheralState: PeripheralState { state.withLock { PeripheralState($0.link) } }
}
