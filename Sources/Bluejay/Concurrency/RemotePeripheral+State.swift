import BluetoothHCI
import Foundation
import Synchronization

extension RemotePeripheral {
    /// Where one peripheral's link is (BleManager's per-device state).
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// The link is up.
        case connected
        /// The app's ``RemotePeripheral/disconnect()`` has its turn and is taking the link down.
        case disconnecting
        /// The link is down, with the controller's reason. The last state.
        case disconnected(HCIStatus)

        public var description: String {
            switch self {
            case .connected: return "connected"
            case .disconnecting: return "disconnecting"
            case let .disconnected(reason): return "disconnected (\(reason))"
            }
        }
    }

    /// The link's state now.
    public var state: State { stateWatchers.current }

    /// Calls `handler` on `queue` with the state now, then with each change, in order, until
    /// the peripheral is disconnected or the returned observation is cancelled.
    @discardableResult
    public func onStateChange(queue: DispatchQueue = DispatchQueue(label: "Bluejay.RemotePeripheral.state"),
                              _ handler: @escaping @Sendable (State) -> Void) -> StateObservation {
        stateWatchers.add { state in queue.async { handler(state) } }
    }

    /// The state now, then each change; the stream ends after ``State/disconnected(_:)`` or when
    /// the consumer stops iterating.
    public func states() -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(8))
        let observation = stateWatchers.add { state in
            continuation.yield(state)
            if case .disconnected = state { continuation.finish() }
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// A registration of ``RemotePeripheral/onStateChange(queue:_:)``.
    public final class StateObservation: Sendable {
        private let end: @Sendable () -> Void

        init(end: @escaping @Sendable () -> Void) { self.end = end }

        /// No more calls after this one returns (one already on its way to the queue still comes).
        public func cancel() { end() }
    }
}

/// The state of a ``RemotePeripheral`` and who is told of its changes. The watchers are told
/// one change at a time, in order (under a lock of their own, not the state's: a stream's
/// watcher that finishes it cancels its observation, which takes the state's lock). They only
/// hand the state on: to a queue, or a stream.
final class RemotePeripheralStateWatchers: Sendable {
    private struct Watchers {
        var current = RemotePeripheral.State.connected
        var watchers: [UInt64: @Sendable (RemotePeripheral.State) -> Void] = [:]
        var nextID: UInt64 = 0
    }

    private let watchers = Mutex(Watchers())
    /// Held while watchers are told, so that changes reach each watcher in order.
    private let telling = Mutex(())

    var current: RemotePeripheral.State { watchers.withLock { $0.current } }

    func add(_ watcher: @escaping @Sendable (RemotePeripheral.State) -> Void) -> RemotePeripheral.StateObservation {
        let id = telling.withLock { _ -> UInt64 in
            let (id, current) = watchers.withLock { state -> (UInt64, RemotePeripheral.State) in
                state.nextID += 1
                if case .disconnected = state.current {} else { state.watchers[state.nextID] = watcher }
                return (state.nextID, state.current)
            }
            watcher(current)
            return id
        }
        return RemotePeripheral.StateObservation { [weak self] in
            self?.watchers.withLock { _ = $0.watchers.removeValue(forKey: id) }
        }
    }

    /// Moves to `state` (nothing moves on from ``RemotePeripheral/State/disconnected(_:)``).
    func publish(_ state: RemotePeripheral.State) {
        telling.withLock { _ in
            let told = watchers.withLock { watchers -> [@Sendable (RemotePeripheral.State) -> Void] in
                if case .disconnected = watchers.current { return [] }
                guard watchers.current != state else { return [] }
                watchers.current = state
                defer { if case .disconnected = state { watchers.watchers.removeAll() } }
                return Array(watchers.watchers.values)
            }
            for watcher in told { watcher(state) }
        }
    }
}
