/// The clock that the stack's timeouts, periodic work and deadlines run on: the real
/// (continuous) clock by default, or a ``ManualClock`` that a test advances by hand, so that
/// what a test says about time holds however busy the machine is.
///
/// ```swift
/// let clock = ManualClock()
/// var configuration = HostConfiguration()
/// configuration.clock = .manual(clock)
/// // … start a request that the peer never answers …
/// clock.advance(by: .seconds(30))   // the ATT transaction times out now, not in 30 real seconds
/// ```
///
/// A `Clock` like `ContinuousClock`, so `sleep(for:)`, `measure` and the other clock
/// operations work on it. Its instants count from an origin of its own (the first use of the
/// continuous clock in the process, or zero for a manual clock).
public struct BluetoothClock: Clock, CustomStringConvertible {
    /// A point in time of a ``BluetoothClock``: the time since the clock's origin.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        public static func + (lhs: Instant, rhs: Duration) -> Instant {
            lhs.advanced(by: rhs)
        }

        public static func - (lhs: Instant, rhs: Instant) -> Duration {
            rhs.duration(to: lhs)
        }

        public var description: String { "\(offset)" }
    }

    private enum Source: Sendable {
        case continuous
        case manual(ManualClock)
    }

    private let source: Source

    /// Real time, as `ContinuousClock` measures it (it keeps counting while the system sleeps).
    public static let continuous = BluetoothClock(source: .continuous)

    /// Time that moves only when `clock` is advanced.
    public static func manual(_ clock: ManualClock) -> BluetoothClock {
        BluetoothClock(source: .manual(clock))
    }

    /// The origin of the continuous clock's instants.
    private static let continuousOrigin = ContinuousClock.now

    public var now: Instant {
        switch source {
        case .continuous: return Instant(offset: ContinuousClock.now - Self.continuousOrigin)
        case let .manual(clock): return Instant(offset: clock.now)
        }
    }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps until `deadline`; throws `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        switch source {
        case .continuous:
            try await ContinuousClock().sleep(until: Self.continuousOrigin + deadline.offset, tolerance: tolerance)
        case let .manual(clock):
            try await clock.sleep(until: deadline.offset)
        }
    }

    /// The manual clock underneath, when time is under a test's control.
    public var manualClock: ManualClock? {
        if case let .manual(clock) = source { return clock }
        return nil
    }

    public var description: String {
        switch source {
        case .continuous: return "continuous clock"
        case let .manual(clock): return "manual clock at \(clock.now)"
        }
    }
}
