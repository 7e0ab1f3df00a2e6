import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing

@Suite("Our host on both ends of the virtual link", .timeLimit(.minutes(1)))
struct HostEndToEndTests {
    static let name = "Virtual Peripheral"

    /// Flags, then the complete local name.
    static var advertisingData: [UInt8] {
        let name = Array(Self.name.utf8)
        return [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name
    }

    @Test func centralScansConnectsTalksAndDisconnects() async throws {
        var options = TwoDevices.Options(powersOn: false)
        options.peripheral.position = .init(x: 5, y: 0)
        let devices = try await TwoDevices(options)
        let central = devices.central
        let peripheral = devices.peripheral
        let peripheralController = devices.peripheralController
        try await central.powerOn()
        let peripheralInfo = try await peripheral.powerOn()
        #expect(peripheralInfo.address == TestAddresses.peripheral)
        #expect(peripheralInfo.aclDataLength == 251)
        let peripheralEvents = await peripheral.events()

        // The peripheral advertises through raw HCI commands on its host's controller.
        let hci = await peripheral.controller
        _ = try await hci.send(LESetAdvertisingParametersCommand(intervalMin: 0x0030, intervalMax: 0x0030))
        _ = try await hci.send(LESetAdvertisingDataCommand(data: Self.advertisingData))
        _ = try await hci.send(LESetScanResponseDataCommand(data: [0x03, 0x19, 0x40, 0x02]))
        _ = try await hci.send(LESetAdvertisingEnableCommand(enable: true))

        let advertisement = try await withTimeout("discovering the peripheral") {
            for try await advertisement in try await central.scan() where advertisement.peer.address == TestAddresses.peripheral
                && advertisement.scanResponse != nil {
                return advertisement
            }
            throw TestTimeout(description: "scan ended")
        }
        await central.stopScanning()
        #expect(advertisement.localName == Self.name)
        #expect(advertisement.isConnectable)
        #expect(advertisement.rssi == -54, "0 dBm minus 40 + 20·log10(5) dB")

        let connection = try await central.connect(to: advertisement.peer, timeout: .seconds(5))
        #expect(connection.role == .central)
        #expect(connection.peer == DeviceAddress(TestAddresses.peripheral, type: .public))
        #expect(connection.gatt.mtu == 517, "the peripheral host's GATT server answered Exchange MTU over the link")
        try await waitUntil("the data length update") { connection.maximumTxOctets == 251 }

        let incoming = try await withTimeout("the peripheral's connected event") {
            for await event in peripheralEvents { if case let .connected(connection) = event { return connection } }
            throw TestTimeout(description: "events ended")
        }
        #expect(incoming.role == .peripheral)
        #expect(incoming.peer == DeviceAddress(TestAddresses.central, type: .public))
        #expect(!peripheralController.isAdvertising)

        #expect(try await connection.readRSSI() == -54)
        // Whatever the server publishes, discovery is an ATT exchange over the link.
        _ = try await connection.gatt.discoverAllPrimaryServices()

        // The central changes the parameters through its controller; the peripheral asks
        // through L2CAP signalling, which the central host answers.
        let updated = try await connection.updateParameters(intervalRange: 24...24, peripheralLatency: 0, supervisionTimeout: 400)
        #expect(updated.interval == 24)
        // Both hosts hear of the update at the same connection event, each in its own time.
        try await waitUntil("the peripheral host saw the update") { incoming.parameters.interval == 24 }
        let requested = try await incoming.updateParameters(intervalRange: 16...16, peripheralLatency: 0, supervisionTimeout: 300)
        #expect(requested.interval == 16)
        #expect(peripheralController.connectionParameters(ofConnection: incoming.handle)?.interval == 16)

        try await connection.disconnect()
        #expect(connection.disconnectReason == .connectionTerminatedByLocalHost)
        #expect(try await incoming.waitForDisconnection() == .remoteUserTerminatedConnection)
        await central.shutdown()
        await peripheral.shutdown()
    }

    @Test func supervisionTimeoutReachesTheHost() async throws {
        let rig = try await CentralHostRig.unconnected(link: .init(timeScale: 5))
        let (central, peripheral, peripheralController) = (rig.host, rig.peripheral, rig.peripheralController)
        var request = ConnectionRequest()
        request.supervisionTimeout = 100
        let connection = try await central.connect(to: peripheral.publicAddress, request: request, timeout: .seconds(5))
        peripheralController.move(to: .init(x: 5000, y: 0))
        let reason = try await withTimeout("the disconnection") { try await connection.waitForDisconnection() }
        #expect(reason == .connectionTimeout)
        await central.shutdown()
    }

    @Test func afterAHardwareErrorTheHostEndsWhatTheControllerLostAndInitializesItAgain() async throws {
        let rig = try await CentralHostRig.unconnected(link: .init(timeScale: 5))
        let (central, peripheral) = (rig.host, rig.peripheral)
        let (centralController, peripheralController) = (rig.centralController, rig.peripheralController)
        let connection = try await central.connect(to: peripheral.publicAddress, timeout: .seconds(5))
        let peripheralHandle = try #require(peripheralController.connectionHandles.first)
        let (scanEnds, scanEnd) = AsyncStream.makeStream(of: HostError?.self)
        try await central.scan(ScanOptions(active: false), handler: { _ in }, onEnd: { scanEnd.yield($0) })

        // A controller that resets without reporting the end of its links (Core 6.0, Vol 4,
        // Part E, 7.7.16 leaves what follows a hardware error to the implementation).
        centralController.simulateHardwareError(code: 0x42, reportsDisconnections: false)
        #expect(try await withTimeout("the end of the link") { try await connection.waitForDisconnection() } == .hardwareFailure)
        let scanError = try await withTimeout("the end of the scan") { await scanEnds.first { _ in true } ?? nil }
        #expect(scanError == HostError.controllerFailure(hardwareCode: 0x42))
        #expect(await central.isScanning == false)

        // The controller was initialized again (its LE event mask too): a new link is reported.
        _ = try await peripheral.disconnection(handle: peripheralHandle, timeout: .seconds(10))
        try await peripheral.advertise()
        let again = try await central.connect(to: peripheral.publicAddress, timeout: .seconds(5))
        #expect(again.isConnected)
        await central.shutdown()
    }

    @Test func connectTimesOutAgainstAnAdvertiserThatIgnoresUs() async throws {
        let rig = try await CentralHostRig.unconnected()
        let (central, peripheral, centralController) = (rig.host, rig.peripheral, rig.centralController)
        rig.peripheralController.setConnectionAcceptance(.ignore)
        await #expect(throws: HostError.self) {
            _ = try await central.connect(to: peripheral.publicAddress, timeout: .milliseconds(300))
        }
        // The caller hears at once; the host then cancels the attempt in the controller.
        try await waitUntil("the controller to stop initiating") { !centralController.isInitiating }
        await central.shutdown()
    }
}
