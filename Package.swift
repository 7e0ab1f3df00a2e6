// swift-tools-version: 6.1
import PackageDescription

/// One module per layer. A lower layer never imports a higher one:
/// BluetoothCore ← BluetoothTransport ← BluetoothHCI ← BluetoothHost ← Bluejay ← bluejay (CLI)
let package = Package(
    name: "Bluejay",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "BluetoothCore", targets: ["BluetoothCore"]),
        .library(name: "BluetoothTransport", targets: ["BluetoothTransport"]),
        .library(name: "BluetoothHCI", targets: ["BluetoothHCI"]),
        .library(name: "BluetoothHost", targets: ["BluetoothHost"]),
        .executable(name: "bluejay", targets: ["BluejayCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .target(name: "BluetoothCore"),
        .target(
            name: "BluetoothTransport",
            dependencies: ["BluetoothCore", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "BluetoothHCI",
            dependencies: [
                "BluetoothCore", "BluetoothTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "BluetoothHost",
            dependencies: [
                "BluetoothCore", "BluetoothHCI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "BluejayCLI",
            dependencies: [
                "BluetoothHost",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "BluetoothCoreTests", dependencies: ["BluetoothCore"]),
        .testTarget(name: "BluetoothTransportTests", dependencies: ["BluetoothTransport"]),
        .testTarget(name: "BluetoothHCITests", dependencies: ["BluetoothHCI"]),
        .testTarget(name: "BluetoothHostTests", dependencies: ["BluetoothHost"]),
        .testTarget(
            name: "InteropTests",
            dependencies: ["BluetoothHost", "BluetoothHCI", "BluetoothTransport"],
            exclude: ["bumble"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
