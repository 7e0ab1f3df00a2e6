import BluetoothCore

/// Where a ``HeartRateSensor``'s beats per minute come from, measurement after measurement.
public enum HeartRateSource: Sendable {
    /// Always the same value.
    case constant(UInt16)
    /// The values in turn, starting over after the last.
    case sequence([UInt16])
    /// `start`, `start + 1`, … (wrapping at 65535): a test can tell that none was lost or
    /// reordered.
    case counting(from: UInt16)
    /// A resting heart: a random walk of a few beats per measurement within ±20 of `center`,
    /// the same for the same seed.
    case wandering(around: UInt16, seed: UInt64)
    /// Computed from the measurement's index (0, 1, 2, …).
    case custom(@Sendable (Int) -> UInt16)

    /// The default: a resting heart around 72 bpm.
    public static let resting = HeartRateSource.wandering(around: 72, seed: 1)
}

/// Produces the values of a ``HeartRateSource`` one by one.
struct HeartRateGenerator: Sendable {
    let source: HeartRateSource
    private(set) var index = 0
    private var generator: SeededRandomNumberGenerator
    private var last: UInt16?

    init(_ source: HeartRateSource) {
        self.source = source
        if case let .wandering(_, seed) = source {
            generator = SeededRandomNumberGenerator(seed: seed)
        } else {
            generator = SeededRandomNumberGenerator(seed: 0)
        }
    }

    /// The next value.
    mutating func next() -> UInt16 {
        defer { index += 1 }
        let value: UInt16
        switch source {
        case let .constant(bpm):
            value = bpm
        case let .sequence(values):
            value = values.isEmpty ? 0 : values[index % values.count]
        case let .counting(start):
            value = start &+ UInt16(truncatingIfNeeded: index)
        case let .wandering(center, _):
            let low = Int(center) - 20
            let high = Int(center) + 20
            let previous = last.map(Int.init) ?? Int(center)
            let step = Int.random(in: -3...3, using: &generator)
            value = UInt16(clamping: max(max(0, low), min(high, previous + step)))
        case let .custom(compute):
            value = compute(index)
        }
        last = value
        return value
    }
}
