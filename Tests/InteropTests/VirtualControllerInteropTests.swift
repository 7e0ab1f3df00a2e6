import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import BluetoothVirtual
import Testing

extension InteropSuites {
    /// Our virtual controller against a stack nobody here wrote: a Bumble host drives one
    /// ``VirtualController`` over HCI/TCP (``VirtualControllerServer``) as an advertising GATT
    /// peripheral; our ``LEHost`` on a second controller of the same link scans, connects,
    /// discovers the service and reads its characteristics.
    @Suite("Virtual controller interop with a Bumble host")
    struct VirtualControllerInteropTests {
        static let bumbleAddress = "F1:E2:D3:C4:B5:A6"
        static let bumbleName = "Bumble on Virtual"
        static let serviceUUID: BluetoothUUID = "6E40A000-B5A3-F393-E0A9-E50E24DCCA9E"
        static let greetingUUID: BluetoothUUID = "6E40A001-B5A3-F393-E0A9-E50E24DCCA9E"
        static let longUUID: BluetoothUUID = "6E40A002-B5A3-F393-E0A9-E50E24DCCA9E"

        @Test func bumbleHostOnAVirtualControllerServesOurHost() async throws {
            // Not a TwoDevices: one end is Bumble's host, on a virtual controller served over TCP.
            let link = VirtualLink()
            let bumbleController = link.addController(name: "bumble", address: try #require(BluetoothAddress("F0:F1:F2:F3:F4:F5")))
            let ourController = link.addController(name: "bluejay", address: try #require(BluetoothAddress("C0:B1:00:00:00:01")),
                                                   position: VirtualPosition(x: 3, y: 0))
            let server = VirtualControllerServer(controller: bumbleController)
            try server.start()
            try await using(server) { server in
                let transport = try #require(server.bumbleTransport)

                try await using(try BumbleRig.start(script: .hostOnVirtual,
                                                 arguments: ["--transport", transport, "--address", Self.bumbleAddress, "--name", Self.bumbleName])) { bumble in
                    let ready = try await bumble.waitForReady(timeout: .seconds(60))
                    #expect(ready.string("address") == Self.bumbleAddress)
                    #expect(bumbleController.isAdvertising, "Bumble enabled advertising through our controller")
                    #expect(bumbleController.randomAddress == BluetoothAddress(Self.bumbleAddress), "LE Set Random Address from Bumble")

                    let host = LEHost(transport: ourController.makeTransport())
                    try await host.powerOn()
                    let peer = DeviceAddress(try #require(BluetoothAddress(Self.bumbleAddress)), type: .random)
                    let advertisement = try await withTimeout("discovering Bumble", .seconds(10)) {
                        for try await advertisement in try await host.scan() where advertisement.peer == peer && advertisement.scanResponse != nil {
                            return advertisement
                        }
                        throw InteropWaitError(description: "the scan ended")
                    }
                    await host.stopScanning()
                    // The name is only in the scan response: our controller carries it (Bumble's own
                    // virtual controller would echo the advertising data instead).
                    #expect(advertisement.localName == Self.bumbleName)
                    #expect(advertisement.serviceUUIDs.contains(Self.serviceUUID))
                    #expect(advertisement.rssi == link.rssi(from: bumbleController, at: ourController))

                    let connection = try await host.connect(to: peer, timeout: .seconds(10))
                    let connected = try await bumble.waitForEvent(named: "connected", timeout: .seconds(15))
                    #expect(connected.string("peer_address") == "C0:B1:00:00:00:01")
                    #expect(connected.string("role") == "peripheral")

                    let services = try await connection.gatt.discoverAllPrimaryServices()
                    let service = try #require(services.first { $0.uuid == Self.serviceUUID }, "services: \(services)")
                    let characteristics = try await connection.gatt.discoverCharacteristics(of: service)
                    let greeting = try #require(characteristics.first { $0.uuid == Self.greetingUUID })
                    let long = try #require(characteristics.first { $0.uuid == Self.longUUID })
                    #expect(try await connection.gatt.read(greeting) == Array("Hello from Bumble on a Bluejay virtual controller".utf8))
                    _ = try await bumble.waitForEvent(named: "read", timeout: .seconds(15))
                    // 400 octets: several LL PDUs and ACL packets each way, reassembled by both stacks.
                    let longValue = try await connection.gatt.readLongValue(handle: long.valueHandle)
                    #expect(longValue == (0..<400).map { UInt8($0 % 251) })

                    try await connection.disconnect()
                    #expect(connection.disconnectReason == .connectionTerminatedByLocalHost)
                    let disconnected = try await bumble.waitForEvent(named: "disconnected", timeout: .seconds(15))
                    #expect(disconnected.int("reason") == Int(HCIStatus.remoteUserTerminatedConnection.rawValue))
                    await host.shutdown()
                }
            }
        }
    }
}

private struct InteropWaitError: Error, CustomStringConvertible {
    var description: String
}
