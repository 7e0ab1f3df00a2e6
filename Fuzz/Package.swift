// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer targets for Bluejay's parsers and state machines: one executable per target,
/// each a `main.swift` that hands libFuzzer's driver its property (see FuzzSupport).
///
/// Kept out of the root package so that neither `swift build` nor `make test`'s main build
/// ever compiles with the fuzzer's instrumentation; scripts/fuzz.sh builds it as
///
///     swift build --package-path Fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address
///
/// so that every module, the root package's included, is instrumented for coverage and checked
/// by AddressSanitizer. It is a debug build: SwiftPM enables testing there, which the targets
/// that reach internal state use (`@testable import`, each use explained where it is).
let package = Package(
    name: "BluejayFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Bluejay", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CLibFuzzer", .product(name: "BluetoothCore", package: "Bluejay"), .product(name: "Logging", package: "swift-log")]
        ),
        fuzzTarget("FuzzH4Deframer", ["BluetoothTransport"]),
        fuzzTarget("FuzzCaptureRedactor", ["BluetoothTransport"]),
        fuzzTarget("FuzzHCIEvent", ["BluetoothHCI"]),
        fuzzTarget("FuzzHCICommand", ["BluetoothHCI"]),
        fuzzTarget("FuzzACLReassembly", ["BluetoothHCI"]),
        fuzzTarget("FuzzChannelPDUs", ["BluetoothHost"]),
        fuzzTarget("FuzzCreditChannel", ["BluetoothHost"]),
        fuzzTarget("FuzzHostChannels", ["BluetoothTransport", "BluetoothHCI", "BluetoothHost"]),
        fuzzTarget("FuzzGATTClient", ["BluetoothHCI", "BluetoothHost"]),
        fuzzTarget("FuzzGATTServer", ["BluetoothHCI", "BluetoothHost"]),
        fuzzTarget("FuzzAdvertising", ["BluetoothHCI", "BluetoothHost"]),
        fuzzTarget("FuzzStrings", ["BluetoothTransport", "BluetoothHost", "Bluejay"]),
        fuzzTarget("FuzzRestoration", ["Bluejay"]),
        fuzzTarget("FuzzPairing", ["BluetoothCrypto", "BluetoothHost"]),
        fuzzTarget("FuzzDBusMessage", ["DBus"]),
    ],
    swiftLanguageModes: [.v6]
)

/// A fuzz target: an executable on FuzzSupport and the root package's `products`.
func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", .product(name: "BluetoothCore", package: "Bluejay")]
            + products.map { .product(name: $0, package: "Bluejay") }
    )
}
