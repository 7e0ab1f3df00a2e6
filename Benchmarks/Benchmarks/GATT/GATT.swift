import BenchmarkSupport
import Benchmark

/// Bluejay's GATT client wired to Bluejay's GATT server in memory (no radio, no HCI), MTU 23.
/// Round trips and notifications: 1,000 per iteration (scaling factor kilo), so
/// "Throughput (# / s)" is operations per second. Long writes: one per iteration.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )

    Benchmark("GATT read round trip, 20-byte value (reads)") { benchmark in
        let pair = try await SharedPair.shared.pair()
        benchmark.startMeasurement()
        blackHole(try await pair.reads(benchmark.scaledIterations.count))
    }

    Benchmark("GATT notification delivered to a subscriber, 20 bytes (notifications)") { benchmark in
        let pair = try await SharedPair.shared.pair()
        benchmark.startMeasurement()
        blackHole(try await pair.notify(benchmark.scaledIterations.count))
    }

    Benchmark("GATT long write, 512 bytes as 29 prepared writes + execute (writes)",
              configuration: .init(scalingFactor: .one)) { benchmark in
        let pair = try await SharedPair.shared.pair()
        benchmark.startMeasurement()
        blackHole(try await pair.longWrites(benchmark.scaledIterations.count))
    }
}

/// One client/server pair for every iteration: their tasks live as long as the process.
actor SharedPair {
    static let shared = SharedPair()
    private var cached: GATTPair?

    func pair() async throws -> GATTPair {
        if let cached { return cached }
        let made = try await GATTPair.make()
        cached = made
        return made
    }
}
