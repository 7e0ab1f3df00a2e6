import DequeModule
import Dispatch
import Foundation
import Synchronization

/// Values handed from Bluejay's tasks to a blocked background thread, in order.
final class BlockingInbox<Value: Sendable>: Sendable {
    private let items = Mutex(Deque<Value>())
    private let available = DispatchSemaphore(value: 0)

    func put(_ value: Value) {
        items.withLock { $0.append(value) }
        available.signal()
    }

    /// The next value, waiting until `deadline` (`nil`: forever). `nil` on timeout.
    func take(until deadline: ContinuousClock.Instant?) -> Value? {
        let signalled: Bool
        if let deadline {
            let remaining = ContinuousClock.now.duration(to: deadline)
            let nanoseconds = max(0, remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000)
            signalled = available.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
        } else {
            available.wait()
            signalled = true
        }
        guard signalled else { return nil }
        return items.withLock { $0.popFirst() }
    }
}

/// The outcome of one blocking call.
final class BlockingResult<Value: Sendable>: Sendable {
    private let inbox = BlockingInbox<Result<Value, BluejayError>>()

    func deliver(_ result: Result<Value, BluejayError>) { inbox.put(result) }

    func wait() throws(BluejayError) -> Value {
        guard let result = inbox.take(until: nil) else { throw .cancelled }
        return try result.get()
    }
}
