import Foundation
import Logging
import BluetoothCore
import BluetoothHost
import BluetoothTransport
import Testing

/// Our host, powered on against a Bumble rig's controller, shut down cleanly afterwards.
func withHost<T>(on rig: BumbleRig, configuration: HostConfiguration = HostConfiguration(),
                 _ body: (LEHost) async throws -> T) async throws -> T {
    var logger = Logger(label: "bluejay.host")
    if ProcessInfo.processInfo.environment["BLUEJAY_TEST_TRACE"] != nil { logger.logLevel = .trace }
    let host = LEHost(transport: try SystemTransports.open(rig.transportSpecification), configuration: configuration, logger: logger)
    do {
        try await host.powerOn()
        let result = try await body(host)
        await host.shutdown()
        return result
    } catch {
        await host.shutdown()
        throw error
    }
}

extension LEHost {
    /// The public address of our host's controller, as a Bumble central connects to it
    /// (`"F0:F1:F2:F3:F4:01"` on the rig's Bumble controller; Rootcanal gives each controller
    /// its own when the host connects, so the rig cannot know it). Needs `powerOn()`.
    var publicAddressText: String {
        get async throws {
            try #require(controllerInfo?.address.description, "the host is not powered on")
        }
    }
}

extension HostConfiguration {
    /// The defaults, with every host timer on `clock`: a timeout fires only when the test
    /// moves that clock, however long the Python peer takes.
    static func manual(_ clock: ManualClock) -> HostConfiguration {
        var configuration = HostConfiguration()
        configuration.clock = .manual(clock)
        return configuration
    }
}

extension BumbleRig {
    /// The first peripheral's address, as our host's type.
    var peer: DeviceAddress {
        get throws {
            let address = try #require(BluetoothAddress(peerAddress), "rig peer address \(peerAddress)")
            return DeviceAddress(address, type: peerAddressType == "public" ? .public : .random)
        }
    }

    /// The address of peripheral `index` (1-based).
    func peripheralAddress(_ index: Int) throws -> DeviceAddress {
        let entry = try #require(peripherals.first { $0.index == index }, "no peripheral \(index) in the rig")
        let address = try #require(BluetoothAddress(entry.address))
        return DeviceAddress(address, type: entry.addressType == "public" ? .public : .random)
    }
}

extension GATTClient {
    /// A characteristic by service and characteristic UUID (written as in the rig's README).
    func characteristic(_ serviceUUID: String, _ characteristicUUID: String) async throws -> GATTCharacteristic {
        try await characteristic(BluetoothUUID(stringLiteral: characteristicUUID), inService: BluetoothUUID(stringLiteral: serviceUUID))
    }
}

/// Collects `count` values from a stream (fewer if it ends), failing with ``TestTimeout`` if
/// they do not come within `timeout`.
func collect<S: AsyncSequence & Sendable>(_ count: Int, from stream: S, timeout: Duration) async throws -> [S.Element]
where S.Element: Sendable {
    try await withTimeout("collecting \(count) values", timeout) {
        var values: [S.Element] = []
        for try await value in stream {
            values.append(value)
            if values.count == count { break }
        }
        return values
    }
}
