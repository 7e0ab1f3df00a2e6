import BluetoothCore

/// Whether the reader pauses after a batch that held only data a peer pushes unasked (see
/// ``HCIController``'s receive coalescing): only while such data comes faster than the window,
/// that is when the previous such batch arrived less than a window before this one, or when
/// this one held several items (they queued up while the reader was busy or paused). A slow
/// stream, a value every few milliseconds, is never paused for: the pause would gather
/// nothing and cost the reader one more wake-up per value. The first value of a burst is not
/// paused for either, the second is, so a burst gets the reader's next read at once.
///
/// A state machine without I/O: the controller feeds it each batch's arrival.
struct CoalescingPace: Sendable {
    /// The longest pause, and the gap below which data counts as a stream.
    let window: Duration
    /// When the previous batch of pushed data arrived.
    private(set) var lastArrival: BluetoothClock.Instant?

    init(window: Duration) {
        self.window = window
    }

    /// A batch of `items` values pushed by a peer arrived at `instant`: whether to pause.
    mutating func batchArrived(at instant: BluetoothClock.Instant, items: Int) -> Bool {
        defer { lastArrival = instant }
        guard window > .zero else { return false }
        if items > 1 { return true }
        guard let lastArrival else { return false }
        return instant - lastArrival < window
    }
}
