@testable import Bluejay
import BluetoothCore
import Foundation
import Synchronization
import Testing

@Suite("Blocking inbox: the deadlines of synchronous listens and flushes", .timeLimit(.minutes(1)))
struct BlockingInboxTests {
    /// Runs `body` on a thread of its own (it blocks) and returns what it returns.
    private func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test("A flush's idle window restarts when each value arrives, on simulated time")
    func flushWindowRestartsAtEachArrival() async throws {
        let clock = ManualClock()
        let inbox = BlockingInbox<Int>(clock: .manual(clock))
        let ended = Mutex<Duration?>(nil)
        let flush = Task {
            await onThread {
                // The flush loop of SynchronizedPeripheral.flushListen, with a 1 s window.
                var taken: [Int] = []
                var deadline = BluetoothClock.manual(clock).now + .seconds(1)
                while let next = inbox.take(until: deadline) {
                    taken.append(next.value)
                    deadline = next.time + .seconds(1)
                }
                ended.withLock { $0 = clock.now }
                return taken
            }
        }
        inbox.put(1)
        clock.advance(by: .milliseconds(600))
        inbox.put(2)
        // 1.2 s after the start, 0.6 s after the last value: the flush goes on, however late
        // its thread takes the values.
        clock.advance(by: .milliseconds(600))
        #expect(ended.withLock { $0 } == nil)
        clock.advance(by: .milliseconds(399))
        #expect(ended.withLock { $0 } == nil)
        clock.advance(by: .milliseconds(1))
        #expect(await flush.value == [1, 2])
        #expect(ended.withLock { $0 } == .milliseconds(1600))
    }

    @Test("A value that arrives at or after the deadline is not taken before it")
    func lateValuesStayForLater() async throws {
        let clock = ManualClock()
        let inbox = BlockingInbox<Int>(clock: .manual(clock))
        let deadline = BluetoothClock.manual(clock).now + .seconds(1)
        clock.advance(by: .seconds(1))
        inbox.put(7)
        #expect(await onThread { inbox.take(until: deadline) } == nil)
        #expect(await onThread { inbox.take(until: nil)?.value } == 7)
    }

    @Test("On the real clock a deadline ends the wait")
    func realDeadline() async throws {
        let inbox = BlockingInbox<Int>()
        let start = ContinuousClock.now
        #expect(await onThread { inbox.take(until: BluetoothClock.continuous.now + .milliseconds(50)) } == nil)
        #expect(start.duration(to: .now) >= .milliseconds(50))
        inbox.put(3)
        #expect(await onThread { inbox.take(until: BluetoothClock.continuous.now + .seconds(5))?.value } == 3)
    }
}
