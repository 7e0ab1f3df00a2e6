import BluetoothCore
import Testing
@testable import BluetoothHCI

/// When the reader pauses after a batch of pushed data, on simulated time: only while the data
/// comes faster than the window.
@Suite struct CoalescingPaceTests {
    static let window: Duration = .milliseconds(1)

    func at(_ microseconds: Int64) -> BluetoothClock.Instant {
        BluetoothClock.Instant(offset: .microseconds(microseconds))
    }

    /// The decisions for single-value batches arriving at these times (µs).
    func decisions(_ arrivals: [Int64], items: Int = 1) -> [Bool] {
        var pace = CoalescingPace(window: Self.window)
        return arrivals.map { pace.batchArrived(at: at($0), items: items) }
    }

    @Test func aSlowStreamIsNeverPausedFor() {
        // A value every 5 ms, every 1.5 ms: each comes after more than a window.
        #expect(decisions(Array(stride(from: 0, to: 50_000, by: 5_000))).allSatisfy { !$0 })
        #expect(decisions(Array(stride(from: 0, to: 15_000, by: 1_500))).allSatisfy { !$0 })
    }

    @Test func aFastStreamIsPausedForFromItsSecondValue() {
        // A value every 200 µs, each read alone: the first after a quiet spell goes at once.
        #expect(decisions([0, 200, 400, 600, 800]) == [false, true, true, true, true])
    }

    @Test func aBatchOfSeveralValuesIsPausedForEvenAfterAQuietSpell() {
        var pace = CoalescingPace(window: Self.window)
        // What a pause gathered comes a window after the previous batch: still a stream.
        let paused = [(0, 3), (1_050, 4), (2_100, 5)].map { pace.batchArrived(at: at($0), items: $1) }
        #expect(paused == [true, true, true])
    }

    @Test func aStreamThatSlowsDownStopsBeingPausedForAtItsFirstLongGap() {
        #expect(decisions([0, 100, 200, 300, 5_300, 10_300]) == [false, true, true, true, false, false])
        // Exactly a window apart is not faster than the window.
        #expect(decisions([0, 1_000]) == [false, false])
    }

    @Test func noWindowNeverPauses() {
        var pace = CoalescingPace(window: .zero)
        let paused = [(0, 8), (1, 1)].map { pace.batchArrived(at: at($0), items: $1) }
        #expect(paused == [false, false])
    }
}
