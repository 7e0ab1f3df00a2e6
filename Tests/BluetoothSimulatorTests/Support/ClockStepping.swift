import Bluejay
import Foundation
import TestSupport

/// Moves a manual clock 100 ms at a time until `done` holds, at most `limit` of simulated
/// time, and returns the clock's time then. Each step waits (briefly, on real time) for
/// something to sleep on the clock or for `done`, so that time moves only while the code
/// under test is waiting on it; a moment when nothing sleeps (the work is between two
/// waits) does not stall the stepping.
@discardableResult
func step(_ clock: ManualClock, until done: @escaping @Sendable () -> Bool, limit: Duration = .seconds(30)) async -> Duration {
    let end = clock.now + limit
    while !done(), clock.now < end {
        _ = await eventually(timeout: .milliseconds(200)) { clock.sleepingTaskCount > 0 || done() }
        guard !done() else { break }
        clock.advance(by: .milliseconds(100))
        _ = await eventually(timeout: .milliseconds(50)) { done() }
    }
    return clock.now
}
