import BluetoothCore
import Synchronization
import Testing

@Suite("Manual clock", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test func alarmsRunInDeadlineOrderEachAtItsOwnTime() {
        let clock = ManualClock()
        let fired = Mutex<[(String, Duration)]>([])
        clock.schedule(at: .milliseconds(30)) { fired.withLock { $0.append(("c", clock.now)) } }
        clock.schedule(at: .milliseconds(10)) { fired.withLock { $0.append(("a", clock.now)) } }
        // Equal deadlines run in the order they were set.
        clock.schedule(at: .milliseconds(10)) { fired.withLock { $0.append(("b", clock.now)) } }
        let cancelled = clock.schedule(at: .milliseconds(20)) { fired.withLock { $0.append(("cancelled", clock.now)) } }
        clock.cancel(cancelled)
        clock.advance(by: .milliseconds(25))
        #expect(fired.withLock { $0.map(\.0) } == ["a", "b"])
        #expect(fired.withLock { $0.map(\.1) } == [.milliseconds(10), .milliseconds(10)])
        #expect(clock.now == .milliseconds(25))
        #expect(clock.nextDeadline == .milliseconds(30))
        #expect(clock.advanceToNextDeadline())
        #expect(fired.withLock { $0.map(\.0) } == ["a", "b", "c"])
        #expect(!clock.advanceToNextDeadline(), "nothing left")
    }

    @Test func anAlarmSetByAnAlarmRunsInTheSameAdvanceWhenDue() {
        let clock = ManualClock()
        let fired = Mutex<[Duration]>([])
        clock.schedule(at: .milliseconds(10)) {
            fired.withLock { $0.append(clock.now) }
            clock.schedule(at: clock.now + .milliseconds(10)) { fired.withLock { $0.append(clock.now) } }
        }
        clock.advance(to: .milliseconds(50))
        #expect(fired.withLock { $0 } == [.milliseconds(10), .milliseconds(20)])
    }

    @Test func timeNeverGoesBack() {
        let clock = ManualClock(now: .seconds(5))
        clock.advance(to: .seconds(1))
        clock.advance(by: .seconds(-1))
        #expect(clock.now == .seconds(5))
    }

    @Test func aSleepingTaskWakesOnlyWhenTimePassesItsDeadline() async throws {
        let clock = ManualClock()
        let woke = Mutex(false)
        let sleeper = Task {
            try await BluetoothClock.manual(clock).sleep(for: .seconds(30))
            woke.withLock { $0 = true }
            return clock.now
        }
        try await clock.waitForSleepingTasks(1)
        clock.advance(by: .seconds(29))
        #expect(!woke.withLock { $0 })
        #expect(clock.sleepingTaskCount == 1)
        clock.advance(by: .seconds(2))
        #expect(try await sleeper.value == .seconds(31), "resumed once the clock passed 30 s; it reads the time of the advance")
        #expect(clock.sleepingTaskCount == 0)
    }

    @Test func cancellingASleepingTaskEndsItsSleepWithCancellationError() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: .seconds(1)) }
        try await clock.waitForSleepingTasks(1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepingTaskCount == 0)
        #expect(clock.nextDeadline == nil)
    }

    @Test func aDeadlineInThePastReturnsAtOnce() async throws {
        let clock = ManualClock(now: .seconds(2))
        try await clock.sleep(until: .seconds(1))
        let instant = BluetoothClock.manual(clock).now
        try await BluetoothClock.manual(clock).sleep(until: instant)
        #expect(clock.sleepingTaskCount == 0)
    }

    @Test func theContinuousClockMovesOnItsOwnAndSleeps() async throws {
        let clock = BluetoothClock.continuous
        let start = clock.now
        try await clock.sleep(for: .milliseconds(5))
        #expect(start.duration(to: clock.now) >= .milliseconds(5))
        #expect(clock.manualClock == nil)
        #expect(BluetoothClock.manual(ManualClock()).manualClock != nil)
    }
}
