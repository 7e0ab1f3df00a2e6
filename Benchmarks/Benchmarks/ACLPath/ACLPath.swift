import BenchmarkSupport
import Benchmark

/// `HCIController.sendACL` through a transport that answers every ACL packet with Number Of
/// Completed Packets: 27-byte controller buffers, 8 of them. 1,000 PDUs per iteration
/// (scaling factor kilo), so "Throughput (# / s)" is PDUs per second.
let single = ACLPathBench.pdus(size: 27, count: 1000)
let long = ACLPathBench.pdus(size: 512, count: 1000)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )

    Benchmark("HCIController.sendACL, 27-byte PDU (1 fragment) (PDUs)",
              configuration: .init(setup: { _ = ACLPaths.short })) { _ in
        blackHole(await ACLPaths.short.send(single))
    }

    Benchmark("HCIController.sendACL, 512-byte PDU (19 fragments) (PDUs)",
              configuration: .init(setup: { _ = ACLPaths.long })) { _ in
        blackHole(await ACLPaths.long.send(long))
    }
}

/// One controller per benchmark, kept for all its iterations.
enum ACLPaths {
    static let short = ACLPathBench(bufferSize: 27, bufferCount: 8)
    static let long = ACLPathBench(bufferSize: 27, bufferCount: 8)
}
