#if canImport(Glibc)
import Synchronization

/// Method calls: the serial and reply-serial bookkeeping, timeouts and cancellation.
extension DBusConnectionCore {
    /// Sends `message` and waits for its answer, at most `timeout`.
    func call(_ message: DBusMessage, timeout: Duration) async throws(DBusError) -> DBusMessage {
        guard message.kind == .methodCall, !message.flags.contains(.noReplyExpected) else {
            throw .invalidArgument("call(_:) sends a method call that expects a reply; use send(_:) for \(message.summary)")
        }
        let waiter = ReplyWaiter()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>) in
                waiter.set(continuation)
                guard !Task.isCancelled else {
                    waiter.resolve(.failure(.cancelled))
                    return
                }
                do throws(DBusError) {
                    let serial = try startCall(message, timeout: timeout, resolve: { waiter.resolve($0) })
                    waiter.serial.withLock { $0 = serial }
                } catch {
                    waiter.resolve(.failure(error))
                }
            }
        } onCancel: {
            waiter.resolve(.failure(.cancelled))
            if let serial = waiter.serial.withLock({ $0 }) { forget(serial) }
        }
        // A cancellation that came before the serial was known: forget the call now.
        if case .failure(.cancelled) = result, let serial = waiter.serial.withLock({ $0 }) { forget(serial) }
        return try result.get()
    }

    /// Registers `resolve` for the answer to `message`, starts its timer and sends it; returns
    /// its serial. `resolve` runs once: on the channel's thread for an answer, in the timer's
    /// task at the timeout, or where the connection closes.
    @discardableResult
    func startCall(
        _ message: DBusMessage, timeout: Duration, resolve: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) throws(DBusError) -> UInt32 {
        var message = message
        let serial = try state.withLock { state throws(DBusError) -> UInt32 in
            if let reason = state.closeReason { throw reason }
            guard state.pending.count < options.maximumPendingCalls else {
                throw .limitReached("\(state.pending.count) calls are already waiting for answers")
            }
            let serial = state.makeSerial()
            state.pending[serial] = PendingCall(resolve: resolve, timer: nil)
            return serial
        }
        message.serial = serial
        do throws(DBusError) {
            let encoded = try encode(message)
            let summary = message.summary + (message.destination.map { " to \($0)" } ?? "")
            let timer = startTimer(options.clock, timeout) { [weak self] in
                self?.resolvePending(serial, with: .failure(.timedOut(summary, after: timeout)))
            }
            let answered = state.withLock { state in
                guard state.pending[serial] != nil else { return true }
                state.pending[serial]?.timer = timer
                return false
            }
            if answered { timer.cancel() }
            try channel.send(encoded)
        } catch {
            forget(serial)
            throw error
        }
        return serial
    }

    /// A task that runs `action` at `timeout` from now, unless cancelled first. The deadline is
    /// fixed here, before the task starts, so that time that passes meanwhile counts.
    private func startTimer<C: Clock>(_ clock: C, _ timeout: Duration, _ action: @escaping @Sendable () -> Void) -> Task<Void, Never>
        where C.Duration == Duration {
        let deadline = clock.now.advanced(by: timeout)
        return Task {
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            action()
        }
    }

    /// The answer to one of our calls (channel thread).
    func resolveReply(_ message: DBusMessage) {
        guard let serial = message.replySerial else { return }
        let result: Result<DBusMessage, DBusError>
        if message.kind == .error {
            result = .failure(.errorReply(name: message.errorName ?? .failed, message: message.errorMessage))
        } else {
            result = .success(message)
        }
        if !resolvePending(serial, with: result) {
            logger.debug("D-Bus answer to #\(serial), which no call waits for (timed out or cancelled)")
        }
    }

    @discardableResult
    func resolvePending(_ serial: UInt32, with result: Result<DBusMessage, DBusError>) -> Bool {
        guard let call = state.withLock({ $0.pending.removeValue(forKey: serial) }) else { return false }
        call.timer?.cancel()
        call.resolve(result)
        return true
    }

    /// Drops a call nobody waits for any more; a late answer is then ignored.
    func forget(_ serial: UInt32) {
        state.withLock { $0.pending.removeValue(forKey: serial) }?.timer?.cancel()
    }
}

/// One caller's wait for an answer: the first result wins, whether it comes before or after the
/// continuation is set.
final class ReplyWaiter: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Result<DBusMessage, DBusError>, Never>)
        case resolved(Result<DBusMessage, DBusError>)
        case done
    }

    private let state = Mutex(State.empty)
    /// The call's serial, once sent.
    let serial = Mutex<UInt32?>(nil)

    func set(_ continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>) {
        let early = state.withLock { state -> Result<DBusMessage, DBusError>? in
            guard case let .resolved(result) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .done
            return result
        }
        if let early { continuation.resume(returning: early) }
    }

    func resolve(_ result: Result<DBusMessage, DBusError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<DBusMessage, DBusError>, Never>? in
            switch state {
            case .empty:
                state = .resolved(result)
                return nil
            case let .waiting(continuation):
                state = .done
                return continuation
            case .resolved, .done:
                return nil
            }
        }
        continuation?.resume(returning: result)
    }
}
#endif
