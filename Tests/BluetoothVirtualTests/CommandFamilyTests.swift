import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Foundation
import Testing

/// One family of advertising, scanning and initiating commands per controller (Core 6.0, Vol 4,
/// Part E, 3.1.1): our virtual controller refuses a mix with Command Disallowed, as real
/// Bluetooth 5 controllers do, so the host must keep to the one it chose at power-on.
@Suite("The host keeps to one command family per controller", .timeLimit(.minutes(1)))
struct CommandFamilyTests {
    static let data = AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .completeLocalName("Legacy API")])

    /// A host on a virtual controller, with the commands it sends recorded.
    /// One of the ``TwoDevices``, with the filter that records its host's commands.
    struct Device {
        let controller: VirtualController
        let transport: FilteringTransport
        let host: LEHost

        /// Both devices filtered, of one controller configuration: the peripheral at the
        /// origin, the central 2 m away.
        static func pair(_ configuration: VirtualController.Configuration = .init(), peripheral peripheralName: String = "peripheral",
                         central centralName: String = "central") async throws -> (peripheral: Device, central: Device) {
            var options = TwoDevices.Options()
            options.peripheral = .init(name: peripheralName, address: TestAddresses.peripheral, controller: configuration, isFiltered: true)
            options.central = .init(name: centralName, address: TestAddresses.central, position: .init(x: 2, y: 0), controller: configuration,
                                    isFiltered: true)
            let devices = try await TwoDevices(options)
            return (Device(controller: devices.peripheralController, transport: try #require(devices.peripheralFilter), host: devices.peripheral),
                    Device(controller: devices.centralController, transport: try #require(devices.centralFilter), host: devices.central))
        }

        /// The families of the commands sent so far.
        var families: Set<LECommandFamily> { Set(transport.sentCommands.compactMap(LECommandFamily.init(opcode:))) }
    }

    static func firstAdvertisement(from address: BluetoothAddress, on host: LEHost,
                                   where matches: @escaping @Sendable (Advertisement) -> Bool = { _ in true }) async throws -> Advertisement {
        try await withTimeout("hearing \(address)") {
            for try await advertisement in try await host.scan() where advertisement.peer.address == address && matches(advertisement) {
                return advertisement
            }
            throw TestTimeout(description: "the scan ended")
        }
    }

    @Test func legacyAdvertisingRunsOnALegacyPDUSetBesideExtendedScanningAndConnecting() async throws {
        let (peripheral, central) = try await Device.pair()
        #expect(await peripheral.host.controllerInfo?.commandFamily == .extended)

        // The legacy API, then scanning on the same controller.
        try await peripheral.host.startAdvertising(Self.data, parameters: AdvertisingParameters(restartsAfterDisconnection: true))
        #expect(await peripheral.host.isAdvertising)
        #expect(await peripheral.host.activeAdvertisingSets.isEmpty, "the legacy advertising's set is not one of the app's")
        try await peripheral.host.scan(handler: { _ in })
        #expect(peripheral.controller.isScanning && peripheral.controller.isAdvertising)
        await peripheral.host.stopScanning()
        let heard = try await Self.firstAdvertisement(from: TestAddresses.peripheral, on: central.host)
        #expect(heard.isConnectable && !heard.isExtended && heard.localName == "Legacy API", "legacy PDUs: \(heard)")

        // A central connects through it: the advertising ends, and starts again after.
        let events = await peripheral.host.events()
        let connection = try await central.host.connect(to: DeviceAddress(TestAddresses.peripheral, type: .public), timeout: .seconds(5))
        let incoming = try await withTimeout("the peripheral's connection") {
            for await event in events { if case let .connected(incoming) = event { return incoming } }
            throw TestTimeout(description: "events ended")
        }
        try await waitUntil("the advertising set ended with the connection") { !peripheral.controller.isAdvertising }
        #expect(await !peripheral.host.isAdvertising)
        try await connection.disconnect()
        _ = try await incoming.waitForDisconnection()
        // The host marks the advertising on once the controller acknowledged the enable.
        try await withTimeout("advertising again after the disconnection") {
            while await !peripheral.host.isAdvertising { await Task.yield() }
        }
        #expect(peripheral.controller.isAdvertising)

        try await peripheral.host.stopAdvertising()
        #expect(await !peripheral.host.isAdvertising)
        #expect(!peripheral.controller.isAdvertising)
        #expect(peripheral.transport.sentCommands.contains(LERemoveAdvertisingSetCommand.opcode))
        // Never a legacy command.
        #expect(peripheral.families == [.extended], "\(peripheral.transport.sentCommands)")
        #expect(central.families == [.extended], "\(central.transport.sentCommands)")
        await central.host.shutdown()
        await peripheral.host.shutdown()
    }

    @Test func anIBeaconRunsBesideAnAppSetAndStopAllLeavesIt() async throws {
        let (beacon, scanner) = try await Device.pair(peripheral: "beacon", central: "scanner")
        let region = IBeacon(proximityUUID: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 2, measuredPower: -59)
        try await beacon.host.startAdvertising(beacon: region)
        let set = try await beacon.host.startAdvertisingSet(AdvertisingData([.completeLocalName("App Set")]),
                                                            parameters: ExtendedAdvertisingParameters(isConnectable: false))
        #expect(await beacon.host.activeAdvertisingSets == [set])
        let heard = try await Self.firstAdvertisement(from: TestAddresses.peripheral, on: scanner.host) { !$0.isExtended }
        #expect(!heard.isConnectable && !heard.isScannable)
        #expect(heard.advertisingData == region.advertisingData)

        // Stopping every app set leaves the beacon advertising.
        try await beacon.host.stopAllAdvertisingSets()
        #expect(await beacon.host.activeAdvertisingSets.isEmpty)
        #expect(await beacon.host.isAdvertising && beacon.controller.isAdvertising)
        try await beacon.host.stopAdvertising()
        #expect(!beacon.controller.isAdvertising)
        #expect(beacon.families == [.extended], "\(beacon.transport.sentCommands)")
        await scanner.host.shutdown()
        await beacon.host.shutdown()
    }

    @Test func aControllerWithoutExtendedAdvertisingGetsOnlyLegacyCommands() async throws {
        var legacy = VirtualController.Configuration()
        legacy.leFeatures.remove(.extendedAdvertising)
        let (peripheral, central) = try await Device.pair(legacy)
        #expect(await central.host.controllerInfo?.commandFamily == .legacy)
        #expect(await central.host.controllerInfo?.adaptations.contains(.legacyCommandsOnly) == true)
        // Extended scanning and connecting are in the controller's bitmap, but its advertising
        // is legacy: the host uses the legacy family for everything.
        #expect(await central.host.controllerInfo?.supportsExtendedScanning == true)
        let set = try await peripheral.host.startAdvertisingSet(Self.data, parameters: ExtendedAdvertisingParameters(isConnectable: true, usesLegacyPDUs: true))
        #expect(set.isLegacyFallback)
        _ = try await Self.firstAdvertisement(from: TestAddresses.peripheral, on: central.host)
        let connection = try await central.host.connect(to: DeviceAddress(TestAddresses.peripheral, type: .public), timeout: .seconds(5))
        try await connection.disconnect()
        #expect(central.families == [.legacy], "\(central.transport.sentCommands)")
        #expect(peripheral.families == [.legacy], "\(peripheral.transport.sentCommands)")
        await central.host.shutdown()
        await peripheral.host.shutdown()
    }
}
