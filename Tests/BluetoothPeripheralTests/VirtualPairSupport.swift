import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual
import Synchronization
import Testing

/// Our central host and our peripheral manager (on the peripheral host of ``TwoDevices``), each
/// on its own controller of one in-process virtual link.
struct VirtualPair {
    static let centralAddress = TestAddresses.central
    static let peripheralAddress = TestAddresses.peripheral

    let devices: TwoDevices
    let manager: PeripheralManager
    var link: VirtualLink { devices.link }
    var centralController: VirtualController { devices.centralController }
    var peripheralController: VirtualController { devices.peripheralController }
    var central: LEHost { devices.central }

    /// `centralConfiguration`: the central's, when it differs from the peripheral's `configuration`.
    init(timeScale: Double = 4, configuration: HostConfiguration = HostConfiguration(),
         centralConfiguration: HostConfiguration? = nil) async throws {
        var options = TwoDevices.Options(link: .init(timeScale: timeScale, seed: 7), configuration: configuration, powersOn: false)
        options.peripheral.position = .init(x: 1, y: 0)
        options.peripheral.configure = { $0.deviceName = "Bluejay Peripheral" }
        if let centralConfiguration { options.central.configure = { $0 = centralConfiguration } }
        devices = try await TwoDevices(options)
        manager = PeripheralManager(host: devices.peripheral)
        try await manager.powerOn()
        try await devices.central.powerOn()
    }

    var peripheralDeviceAddress: DeviceAddress { DeviceAddress(Self.peripheralAddress, type: .public) }

    /// Scans until the peripheral's advertisement (with its scan response, when it has one) arrives.
    /// The scan has stopped when this returns, so the next scan may start at once.
    func findPeripheral(requireScanResponse: Bool = false, timeout: Duration = .seconds(10)) async throws -> Advertisement {
        let stream = try await central.scan(ScanOptions(active: true, filterDuplicates: false))
        do {
            let found = try await withTimeout("the peripheral's advertisement", timeout) {
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
