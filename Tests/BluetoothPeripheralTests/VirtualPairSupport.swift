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

    init(timeScale: Double = 4, configuration: HostConfiguration = HostConfiguration()) async throws {
        link = VirtualLink(configuration: .init(timeScale: timeScale, seed: 7))
        centralController = link.addController(name: "central", address: Self.centralAddress)
        peripheralController = link.addController(name: "peripheral", address: Self.peripheralAddress, position: .init(x: 1, y: 0))
        var peripheralConfiguration = configuration
        peripheralConfiguration.deviceName = "Bluejay Peripheral"
        manager = PeripheralManager(transport: peripheralController.makeTransport(), configuration: peripheralConfiguration)
        central = LEHost(transport: centralController.makeTransport(), configuration: configuration)
        try await manager.powerOn()
        try await central.powerOn()
    }

    var peripheralDeviceAddress: DeviceAddress { DeviceAddress(Self.peripheralAddress, type: .public) }

    /// Scans until the peripheral's advertisement (with its scan response, when it has one) arrives.
    func findPeripheral(requireScanResponse: Bool = false, timeout: Duration = .seconds(10)) async throws -> Advertisement {
        let stream = try await central.scan(ScanOptions(active: true, filterDuplicates: false))
        defer { Task { await central.stopScanning() } }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        for try await advertisement in stream where advertisement.peer.address == Self.peripheralAddress {
            if !requireScanResponse || advertisement.scanResponse != nil { return advertisement }
            if ContinuousClock.now > deadline { break }
        }
        throw PairFailure.notFound
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
    case neverReady
}

/// Counts ``PeripheralConnectionEvent/readyToUpdateSubscribers(_:)`` events, to wait for one.
final class ReadinessCounter: Sendable {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    private let ready = Count()
    private let task: Task<Void, Never>

    init(_ events: AsyncStream<PeripheralConnectionEvent>) {
        let ready = self.ready
        task = Task {
            for await event in events {
                if case .readyToUpdateSubscribers = event { ready.value.withLock { $0 += 1 } }
            }
        }
    }

    deinit { task.cancel() }

    /// Returns once a readiness event came (taking it), or throws after `timeout`.
    func waitForReady(timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let took = ready.value.withLock { count -> Bool in
                guard count > 0 else { return false }
                count -= 1
                return true
            }
            if took { return }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw PairFailure.neverReady
    }
}

extension PeripheralManager {
    /// Updates a value, and when a subscriber's queue is full waits for it to drain and
    /// tries again, as an application should. Returns how many times the queue was full.
    @discardableResult
    func deliver(_ value: [UInt8], to characteristic: GATTPublishedCharacteristic, readiness: ReadinessCounter) async throws -> Int {
        var full = 0
        while true {
            let result = try await updateValue(value, for: characteristic)
            guard case .queueFull? = result.shortfall else {
                #expect(result.succeeded, "\(result)")
                return full
            }
            full += 1
            try await readiness.waitForReady()
        }
    }
}
