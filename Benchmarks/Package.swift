// swift-tools-version: 6.1
import PackageDescription

/// Bluejay's benchmarks, kept out of the main package so that `swift build` and `make test`
/// never build them. `make bench` runs the ordo-one benchmarks (targets under
/// Benchmarks/<Name>/); `make bench-compare` runs bluejay-compare against Bumble;
/// scripts/bench-rig.sh runs bluejay-rig-bench against Bumble's central on Bumble's virtual radio.
let bluejay = [
    Target.Dependency.product(name: "BluetoothCore", package: "Bluejay"),
    .product(name: "BluetoothTransport", package: "Bluejay"),
    .product(name: "BluetoothHCI", package: "Bluejay"),
    .product(name: "BluetoothHost", package: "Bluejay"),
]

func benchmark(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["BenchmarkSupport", .product(name: "Benchmark", package: "benchmark")] + bluejay,
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "BluejayBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, so that the identity does not depend on the name of the clone's folder.
        .package(name: "Bluejay", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // glibc's heap statistics, for MemoryBench.
        .target(name: "CHeapUsage"),
        .target(name: "BenchmarkSupport", dependencies: bluejay + [
            "CHeapUsage",
            .product(name: "Bluejay", package: "Bluejay"), .product(name: "BluetoothVirtual", package: "Bluejay"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "bluejay-compare", dependencies: ["BenchmarkSupport"]),
        // Bluejay's central against Bumble's on Bumble's virtual radio (scripts/bench-rig.sh).
        .executableTarget(
            name: "bluejay-rig-bench",
            dependencies: [.product(name: "Bluejay", package: "Bluejay"), .product(name: "Logging", package: "swift-log")]
        ),
        benchmark("Decoding"),
        benchmark("Encoding"),
        benchmark("ACLPath"),
        benchmark("GATT"),
        benchmark("Pipeline"),
    ],
    swiftLanguageModes: [.v6]
)
