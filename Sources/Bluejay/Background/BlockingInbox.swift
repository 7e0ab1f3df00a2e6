import BluetoothCore
import DequeModule
import Dispatch
import Foundation
import Synchronization

/// Values handed from Bluejay's tasks to a blocked background thread, in order, each stamped
/// with the time it arrived on the inbox's clock.
final class BlockingInbox<Value: Sendable>: Sendable {
    /// A value and when it arrived.
    struct Arrival: Sendable {
        var value: Value
        var time: BluetoothClock.Instant
    }

    private let clock: BluetoothClock
    private let items = Mutex(Deque<Arrival>())
    private let available = DispatchSemaphore(value: 0)

    init(clock: BluetoothClock = .continuous) {
        self.clock = clock
    }

    func put(_ value: Value) {
        let arrival = Arrival(value: value, time: clock.now)
        items.withLock { $0.append(arrival) }
        available.signal()
    }

    /// The next value that arrived before `deadline` (`nil`: no deadline), waiting for it;
    /// `nil` once the deadline has passed without one. Values that arrived at or after the
    /// deadline are left for a later call.
    func take(until deadline: BluetoothClock.Instant?) -> Arrival? {
        guard let deadline else {
            while true {
                available.wait()
                if let arrival = items.withLock({ $0.popFirst() }) { return arrival }
            }
        }
        // With a manual clock the deadline passes when the test moves the clock: an alarm
        // wakes the thread then.
        let manual = clock.manualClock
        let alarm = manual.map { manual in
            manual.schedule(at: deadline.offset) { [available] in available.signal() }
        }
        defer { if let manual, let alarm { manual.cancel(alarm) } }
        while true {
            let arrival = items.withLock { items -> Arrival? in
                guard let first = items.first, first.time < deadline else { return nil }
                return items.popFirst()
            }
            if let arrival { return arrival }
            if clock.now >= deadline { return nil }
            if manual != nil {
                available.wait()
            } else {
                let remaining = clock.now.duration(to: deadline)
                let nanoseconds = max(0, remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000)
                _ = available.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds)))
            }
        }
    }
}

/// The outcome of one blocking call.
final class BlockingResult<Value: Sendable>: Sendable {
    private let inbox = BlockingInbox<Result<Value, BluejayError>>()

    func deliver(_ result: Result<Value, BluejayError>) { inbox.put(result) }

    func wait() throws(BluejayError) -> Value {
        guard let result = inbox.take(until: nil)?.value else { throw .cancelled }
        return try result.get()
    }
}
