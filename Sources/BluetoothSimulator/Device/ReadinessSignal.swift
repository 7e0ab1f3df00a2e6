import Synchronization

/// Tells waiters that a connection's notification queue drained (or the connection ended),
/// without losing a signal that comes between a failed send and the wait: a waiter names the
/// epoch it saw before sending and returns as soon as the connection's epoch is past it.
final class ReadinessSignal: Sendable {
    private struct Waiter {
        var connectionHandle: UInt16
        var epoch: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var epochs: [UInt16: UInt64] = [:]
        var waiters: [UInt64: Waiter] = [:]
        /// Waits whose time ran out before they were registered.
        var expired: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The connection's epoch now: read it before trying to send.
    func epoch(of connectionHandle: UInt16) -> UInt64 {
        state.withLock { $0.epochs[connectionHandle, default: 0] }
    }

    /// The connection can take values again (or is gone): wakes its waiters.
    func signal(_ connectionHandle: UInt16) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let epoch = state.epochs[connectionHandle, default: 0] + 1
            state.epochs[connectionHandle] = epoch
            let due = state.waiters.filter { $0.value.connectionHandle == connectionHandle && $0.value.epoch < epoch }
            for id in due.keys { state.waiters[id] = nil }
            return due.values.map(\.continuation)
        }
        woken.forEach { $0.resume() }
    }

    /// Wakes every waiter (the device stops).
    func signalAll() {
        let handles = state.withLock { state in Set(state.waiters.values.map(\.connectionHandle)) }
        handles.forEach(signal)
    }

    /// Waits until the connection's epoch passes `epoch`, at most `timeout`. Returns whether
    /// it did.
    func wait(for connectionHandle: UInt16, after epoch: UInt64, timeout: Duration) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            let continuation = self?.state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.expired.insert(id)
                    return nil
                }
                return waiter.continuation
            }
            continuation?.resume()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.epochs[connectionHandle, default: 0] > epoch { return true }
                if state.expired.remove(id) != nil { return true }
                state.waiters[id] = Waiter(connectionHandle: connectionHandle, epoch: epoch, continuation: continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        return self.epoch(of: connectionHandle) > epoch
    }
}
