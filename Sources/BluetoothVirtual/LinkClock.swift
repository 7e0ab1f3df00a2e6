/// The link's simulated clock: time since the link was created, running at ``timeScale``
/// times real time (1 by default; 10 makes a 5 s supervision timeout pass in 0.5 s).
struct LinkClock: Sendable {
    private var realOrigin: ContinuousClock.Instant
    private var simulatedAtOrigin: Duration = .zero
    private(set) var timeScale: Double

    init(timeScale: Double, realNow: ContinuousClock.Instant = .now) {
        realOrigin = realNow
        self.timeScale = Self.sanitized(timeScale)
    }

    /// The simulated time at a real instant.
    func simulatedTime(at real: ContinuousClock.Instant) -> Duration {
        simulatedAtOrigin + (real - realOrigin) * timeScale
    }

    /// The real instant at which the simulated clock reads `simulated`.
    func realInstant(for simulated: Duration) -> ContinuousClock.Instant {
        realOrigin + (simulated - simulatedAtOrigin) / timeScale
    }

    /// Changes the rate from `real` on, without a jump in simulated time.
    mutating func setTimeScale(_ scale: Double, at real: ContinuousClock.Instant = .now) {
        simulatedAtOrigin = simulatedTime(at: real)
        realOrigin = real
        timeScale = Self.sanitized(scale)
    }

    /// Keeps the scale finite and positive (between 1/1000 and 1000).
    private static func sanitized(_ scale: Double) -> Double {
        guard scale.isFinite else { return 1 }
        return min(1000, max(0.001, scale))
    }
}
