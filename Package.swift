// swift-tools-version: 6.1
import PackageDescription

/// One module per layer; a lower layer never imports a higher one.
///
///     BluetoothCore ← BluetoothTransport ← BluetoothHCI ← BluetoothHost ← BluetoothPeripheral ←┐
///                                       ↖ BluetoothVirtual (an HCI controller) ← BluetoothSimulator ├ bluejay (CLI), bluejay-soak
///     GATTProfiles (serde, SIG profiles)       BluetoothHost, GATTProfiles ← Bluejay (app API) ←┘
///     BluetoothCore ← BluetoothCrypto (the SMP security toolbox, on swift-crypto) ← BluetoothHost, BluetoothVirtual ← BluetoothVirtual
///     DBus (a D-Bus client in pure Swift, for the BlueZ backend; on no Bluetooth module)
///     DBus, BluetoothHost (the value types and the CentralBackend seam) ← BluetoothBlueZ (the BlueZ backend) ← Bluejay, bluejay
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let deque = Target.Dependency.product(name: "DequeModule", package: "swift-collections")
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let cryptoExtras = Target.Dependency.product(name: "CryptoExtras", package: "swift-crypto")

let package = Package(
    name: "Bluejay",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Bluejay", targets: ["Bluejay"]),
        .library(name: "BluetoothPeripheral", targets: ["BluetoothPeripheral"]),
        .library(name: "BluetoothSimulator", targets: ["BluetoothSimulator"]),
        .library(name: "BluetoothHost", targets: ["BluetoothHost"]),
        .library(name: "BluetoothVirtual", targets: ["BluetoothVirtual"]),
        .library(name: "GATTProfiles", targets: ["GATTProfiles"]),
        .library(name: "BluetoothHCI", targets: ["BluetoothHCI"]),
        .library(name: "BluetoothTransport", targets: ["BluetoothTransport"]),
        .library(name: "BluetoothCrypto", targets: ["BluetoothCrypto"]),
        .library(name: "BluetoothCore", targets: ["BluetoothCore"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "BluetoothBlueZ", targets: ["BluetoothBlueZ"]),
        .executable(name: "bluejay", targets: ["BluejayCLI"]),
        .executable(name: "bluejay-soak", targets: ["BluejaySoak"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // `make docs`: DocC for every library module (a plugin, linked into nothing).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "BluetoothCore"),
        .target(name: "BluetoothCrypto", dependencies: ["BluetoothCore", crypto, cryptoExtras]),
        .target(name: "BluetoothTransport", dependencies: ["BluetoothCore", logging]),
        .target(name: "BluetoothHCI", dependencies: ["BluetoothCore", "BluetoothTransport", logging, deque]),
        .target(name: "BluetoothHost", dependencies: ["BluetoothCore", "BluetoothCrypto", "BluetoothTransport", "BluetoothHCI", logging, deque]),
        .target(name: "BluetoothVirtual", dependencies: ["BluetoothCore", "BluetoothCrypto", "BluetoothTransport", "BluetoothHCI", logging, deque]),
        .target(name: "GATTProfiles", dependencies: ["BluetoothCore"]),
        .target(name: "DBus", dependencies: [logging, deque]),
        // The BlueZ backend: the central (and later peripheral) role on bluetoothd over D-Bus, with our host's value types.
        .target(name: "BluetoothBlueZ", dependencies: ["DBus", "BluetoothCore", "BluetoothHCI", "BluetoothHost", logging]),
        .target(
            name: "BluetoothPeripheral",
            dependencies: ["BluetoothCore", "BluetoothTransport", "BluetoothHCI", "BluetoothHost", "GATTProfiles", logging]
        ),
        .target(
            name: "BluetoothSimulator",
            dependencies: [
                "BluetoothCore", "BluetoothTransport", "BluetoothHCI", "BluetoothHost", "BluetoothVirtual", "BluetoothPeripheral",
                "GATTProfiles", logging,
            ]
        ),
        .target(
            name: "Bluejay",
            dependencies: [
                "BluetoothCore", "BluetoothTransport", "BluetoothHCI", "BluetoothHost", "BluetoothBlueZ", "BluetoothVirtual", "GATTProfiles", logging,
                deque,
            ]
        ),
        .executableTarget(
            name: "BluejayCLI",
            dependencies: [
                "Bluejay", "BluetoothCore", "BluetoothHost", "BluetoothBlueZ", "BluetoothPeripheral", "BluetoothSimulator", "BluetoothVirtual",
                "GATTProfiles", "BluetoothTransport", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging,
            ]
        ),
        // `make soak`: centrals and peripherals on one virtual radio, mixed operations, random faults.
        .executableTarget(
            name: "BluejaySoak",
            dependencies: [
                "Bluejay", "BluetoothCore", "BluetoothHCI", "BluetoothHost", "BluetoothSimulator", "BluetoothVirtual",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging, deque,
            ]
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Bluejay", "BluetoothCore", "BluetoothHCI", "BluetoothHost", "BluetoothPeripheral", "BluetoothTransport", "BluetoothVirtual"],
            path: "Tests/TestSupport"
        ),
        // A small app on the Bluejay API that the Linux guest tests run inside the guest over hci0.
        .executableTarget(name: "BluejayGuestApp", dependencies: ["Bluejay", "BluetoothCore", "BluetoothHost", "BluetoothPeripheral", "BluetoothBlueZ", "BluetoothTransport"], path: "Tests/GuestApp"),
        .testTarget(name: "BluetoothCoreTests", dependencies: ["BluetoothCore"]),
        .testTarget(name: "BluetoothCryptoTests", dependencies: ["BluetoothCore", "BluetoothCrypto"]),
        .testTarget(name: "BluetoothTransportTests", dependencies: ["BluetoothCore", "BluetoothTransport"]),
        .testTarget(name: "BluetoothHCITests", dependencies: ["BluetoothCore", "BluetoothTransport", "BluetoothHCI", "TestSupport"]),
        .testTarget(name: "BluetoothHostTests", dependencies: ["BluetoothCore", "BluetoothCrypto", "BluetoothHCI", "BluetoothHost", "TestSupport"]),
        .testTarget(
            name: "BluetoothVirtualTests",
            dependencies: ["BluetoothCore", "BluetoothCrypto", "BluetoothTransport", "BluetoothHCI", "BluetoothVirtual", "BluetoothHost", "TestSupport", logging]
        ),
        .testTarget(name: "GATTProfilesTests", dependencies: ["BluetoothCore", "GATTProfiles"]),
        // BluetoothCore only for ManualClock (the call timeouts on simulated time).
        .testTarget(name: "DBusTests", dependencies: ["DBus", "BluetoothCore", "TestSupport"]),
        .testTarget(name: "BluetoothBlueZTests", dependencies: ["BluetoothBlueZ", "DBus", "BluetoothCore", "BluetoothHCI", "BluetoothHost"]),
        .testTarget(
            name: "BluetoothPeripheralTests",
            dependencies: ["BluetoothCore", "BluetoothHCI", "BluetoothHost", "BluetoothPeripheral", "BluetoothVirtual", "TestSupport"]
        ),
        .testTarget(
            name: "BluejayTests",
            dependencies: ["BluetoothCore", "BluetoothCrypto", "BluetoothHCI", "BluetoothHost", "Bluejay", "BluetoothVirtual", "TestSupport"]
        ),
        .testTarget(name: "BluetoothSimulatorTests", dependencies: ["BluetoothTransport", "BluetoothSimulator", "Bluejay", "GATTProfiles", "TestSupport"]),
        // The seeds' Bluejay snippets, compiled as a porting app compiles them (Swift 5 language mode).
        .testTarget(
            name: "SeedSnippetTests",
            dependencies: ["Bluejay", "BluetoothSimulator", "TestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The soak's own checks (the delivery audit), tested on logs made up to pass and to fail.
        .testTarget(name: "BluejaySoakTests", dependencies: ["BluejaySoak"]),
        .testTarget(
            name: "InteropTests",
            dependencies: [
                "Bluejay", "BluetoothCore", "BluetoothCrypto", "BluetoothPeripheral", "BluetoothSimulator", "BluetoothHost", "BluetoothHCI",
                "BluetoothTransport", "BluetoothVirtual", "TestSupport",
            ],
            exclude: ["bumble"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
