import Benchmark
import BenchmarkSupport

/// The whole receive path as an app runs it, with the radio taken out (see PipelineBench):
/// H4 bytes handed to our central's transport, through HCI, ACL, L2CAP, ATT, GATT and Bluejay,
/// to the app. 1,000 items per iteration (scaling factor kilo), so "Throughput (# / s)" is
/// items per second. CPU per item, measured side by side with Bumble end to end, is in
/// `make bench-compare`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )

    Benchmark("H4 to Bluejay listen callback, 20-byte notifications, 32 per read (notifications)") { benchmark in
        let bench = try await SharedPipeline.shared.bench()
        let count = benchmark.scaledIterations.count
        let chunks = bench.notificationChunks(count: count, size: 20, perRead: 32)
        benchmark.startMeasurement()
        blackHole(await bench.deliver(chunks, count: count))
    }

    Benchmark("H4 to Bluejay listen callback, 244-byte notifications, 8 per read (notifications)") { benchmark in
        let bench = try await SharedPipeline.shared.bench()
        let count = benchmark.scaledIterations.count
        let chunks = bench.notificationChunks(count: count, size: 244, perRead: 8)
        benchmark.startMeasurement()
        blackHole(await bench.deliver(chunks, count: count))
    }

    Benchmark("H4 to Bluejay async scan with duplicates, advertising reports, 8 per read (reports)") { benchmark in
        let bench = try await SharedPipeline.shared.bench()
        let count = benchmark.scaledIterations.count
        let chunks = try PipelineBench.advertisingReportChunks(count: count, perRead: 8)
        benchmark.startMeasurement()
        try await bench.scan(chunks, count: count)
    }

    // Each report from an address the scan has not heard yet: the path of a crowd, or of a peer
    // rotating random addresses (`bluejay-compare scan COUNT 8 10000` measures 10,000 tracked).
    Benchmark("H4 to Bluejay async scan with duplicates, a new random address each report, 8 per read (reports)") { benchmark in
        let bench = try await SharedPipeline.shared.bench()
        let count = benchmark.scaledIterations.count
        let chunks = try PipelineBench.advertisingReportChunks(count: count, perRead: 8, advertisers: count)
        benchmark.startMeasurement()
        try await bench.scan(chunks, count: count)
    }

    Benchmark("Bluejay async read round trip, 20 bytes, responder in the controller's place (reads)") { benchmark in
        let bench = try await SharedPipeline.shared.bench()
        benchmark.startMeasurement()
        try await bench.sequentialReads(benchmark.scaledIterations.count)
    }
}

/// One central and peripheral for every iteration: their tasks live as long as the process.
actor SharedPipeline {
    static let shared = SharedPipeline()
    private var cached: PipelineBench?

    func bench() async throws -> PipelineBench {
        if let cached { return cached }
        let made = try await PipelineBench.make()
        cached = made
        return made
    }
}
