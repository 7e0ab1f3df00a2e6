import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual
import Synchronization
import Testing

/// Our central host and our peripheral manager, each on its own controller of one in-process
/// virtual link.
struct VirtualPair {
    static let centralAddress = BluetoothAddress("C0:00:00:00:00:01")!
    static let peripheralAddress = BluetoothAddress("C0:00:00:00:00:02")!

    let link: VirtualLink
    let centralController: VirtualController
    let peripheralController: VirtualController
    let central: LEHost
    let manager: PeripheralManager

    /// `centralConfiguration`: the central's, when it differs from the peripheral's `configuration`.
    init(timeScale: Double = 4, configuration: HostConfiguration = HostConfiguration(),
         centralConfiguration: HostConfiguration? = nil) async throws {
        link = VirtualLink(configuration: .init(timeScale: timeScale, seed: 7))
        centralController = link.addController(name: "central", address: Self.centralAddress)
        peripheralController = link.addController(name: "peripheral", address: Self.peripheralAddress, position: .init(x: 1, y: 0))
        var peripheralConfiguration = configuration
        peripheralConfiguration.deviceName = "Bluejay Peripheral"
        manager = PeripheralManager(transport: peripheralController.makeTransport(), configuration: peripheralConfiguration)
        central = LEHost(transport: centralController.makeTransport(), configuration: centralConfiguration ?? configuration)
        try await manager.powerOn()
        try await central.powerOn()
    }

    var peripheralDeviceAddress: DeviceAddress { DeviceAddress(Self.peripheralAddress, type: .public) }

    /// Scans until the peripheral's advertisement (with its scan response, when it has one) arrives.
    /// The scan has stopped when this returns, so the next scan may start at once.
    func findPeripheral(requireScanResponse: Bool = false, timeout: Duration = .seconds(10)) async throws -> Advertisement {
        let stream = try await central.scan(ScanOptions(active: true, filterDuplicates: false))
        do {
            let found = try await withTestTimeout(timeout, "the peripheral's advertisement") {
                for try await advertisement in stream where advertisement.peer.address == Self.peripheralAddress {
                    if !requireScanResponse || advertisement.scanResponse != nil { return advertisement }
                }
                throw PairFailure.notFound
            }
            await central.stopScanning()
            return found
        } catch {
            await central.stopScanning()
            throw error
        }
    }

    func connect() async throws -> Connection {
        try await central.connect(to: peripheralDeviceAddress, timeout: .seconds(10))
    }

    func shutdown() async {
        await central.shutdown()
        await manager.powerOff()
    }
}

enum PairFailure: Error {
    case notFound
}
