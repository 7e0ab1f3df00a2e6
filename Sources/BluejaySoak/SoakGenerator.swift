/// SplitMix64: the soak's repeatable random numbers. Every actor of the run (each central,
/// each peripheral, the fault injector) draws from its own generator derived from the run's
/// seed, so the same seed makes the same decisions in the same order for each of them,
/// however their work interleaves.
struct SoakGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent generator for one actor, named by `stream` (its role and index).
    static func derived(from seed: UInt64, stream: UInt64) -> SoakGenerator {
        var mixer = SoakGenerator(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return SoakGenerator(seed: mixer.next())
    }

    /// A duration drawn uniformly from `range`, to the millisecond.
    mutating func milliseconds(_ range: ClosedRange<Int>) -> Duration {
        .milliseconds(Int.random(in: range, using: &self))
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// One of `choices`, each as likely as its weight (weights > 0).
    mutating func weighted<T>(_ choices: [(T, Int)]) -> T? {
        let total = choices.reduce(0) { $0 + max(0, $1.1) }
        guard total > 0 else { return nil }
        var pick = Int.random(in: 0..<total, using: &self)
        for (choice, weight) in choices where weight > 0 {
            if pick < weight { return choice }
            pick -= weight
        }
        return nil
    }
}
