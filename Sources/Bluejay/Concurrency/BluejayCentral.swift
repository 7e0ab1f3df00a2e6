import BluetoothBlueZ
import BluetoothHCI
import BluetoothHost
import Foundation
import Logging
import Synchronization

/// Several peripherals at once, with Swift concurrency: the multi-connection counterpart of
/// ``Bluejay`` (which, like the Bluejay READMEs, talks to one peripheral). Each
/// ``RemotePeripheral`` has its own FIFO queue, so a slow peripheral never holds up another.
///
/// ```swift
/// let central = try await BluejayCentral.open()
/// for try await event in central.scan(serviceIdentifiers: [heartRateService]) { ... }
/// let sensor = try await central.connect(discovery.peripheralIdentifier, timeout: .seconds(15))
/// let location: UInt8 = try await sensor.read(from: bodySensorLocation)
/// ```
public final class BluejayCentral: Sendable {
    /// What this central runs on: our host (``host``) or BlueZ.
    public let backend: any CentralBackend
    /// The host this central runs on; `nil` when it runs on BlueZ.
    public var host: LEHost? { backend as? LEHost }
    private let ownsHost: Bool
    private let operationTimeout: Timeout
    private let logger: Logger
    private let state = Mutex(State())

    private struct State: Sendable {
        var peripherals: [ObjectIdentifier: RemotePeripheral] = [:]
        var scanning = false
    }

    /// A central on a host that is already open (it is powered on if it is not yet).
    /// - Parameters:
    ///   - host: the host to run on; powered on if it is not yet.
    ///   - logger: where the central logs.
    ///   - operationTimeout: the time limit of each read, write, discovery and listen set-up.
    public convenience init(host: LEHost, operationTimeout: Timeout = .seconds(15), logger: Logger = Logger(label: "bluejay.central")) {
        self.init(backend: host, operationTimeout: operationTimeout, logger: logger)
    }

    /// A central on a backend that is already started: our host, or BlueZ
    /// (`BluetoothBlueZ.BlueZCentral`).
    public init(backend: any CentralBackend, operationTimeout: Timeout = .seconds(15), logger: Logger = Logger(label: "bluejay.central")) {
        self.backend = backend
        ownsHost = false
        self.operationTimeout = operationTimeout
        self.logger = logger
    }

    private init(ownedBackend: any CentralBackend, operationTimeout: Timeout, logger: Logger) {
        backend = ownedBackend
        ownsHost = true
        self.operationTimeout = operationTimeout
        self.logger = logger
    }

    /// Opens a controller (``TransportProvider/environment`` by default: `$BLUEJAY_HCI`, else
    /// the in-process virtual controller) and powers its host on; `bluez` or `bluez:hciN` runs
    /// on BlueZ instead (the adapter bluetoothd keeps; `configuration` then gives the clock and
    /// the pairing agent's IO capability).
    public static func open(_ transport: TransportProvider = .environment, configuration: HostConfiguration = HostConfiguration(),
                            operationTimeout: Timeout = .seconds(15), logger: Logger = Logger(label: "bluejay.central")) async throws(BluejayError) -> BluejayCentral {
        let backend: any CentralBackend
        switch try transport.backend() {
        case let .transport(opened):
            backend = LEHost(transport: opened, configuration: configuration, logger: logger)
        case let .blueZ(adapter):
            backend = BlueZCentral(adapter: adapter, ioCapability: configuration.security.ioCapability, clock: configuration.clock,
                                   logger: logger)
        }
        do {
            try await backend.start()
        } catch {
            await backend.shutdown()
            throw BluejayError(error)
        }
        return BluejayCentral(ownedBackend: backend, operationTimeout: operationTimeout, logger: logger)
    }

    /// The peripherals connected through this central.
    public var peripherals: [RemotePeripheral] {
        state.withLock { Array($0.peripherals.values) }.filter(\.isConnected)
    }

    /// Scans; the events are those of ``Bluejay/scan(duration:allowDuplicates:throttleRSSIDelta:timeout:endsWhenConnecting:serviceIdentifiers:)``.
    /// One scan at a time; stopping the iteration stops the scan.
    public func scan(duration: TimeInterval = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5,
                     serviceIdentifiers: [ServiceIdentifier]? = nil) -> ValueStream<ScanEvent> {
        let events = ScanEventStream()
        var uuids: [BluetoothUUID] = []
        for service in serviceIdentifiers ?? [] {
            guard let uuid = service.uuid else {
                events.continuation.finish(throwing: BluejayError.invalidUUID(service.uuidString))
                return events.stream
            }
            uuids.append(uuid)
        }
        var tracker = ScanTracker.Configuration()
        tracker.allowDuplicates = allowDuplicates
        tracker.throttleRSSIDelta = throttleRSSIDelta
        let request = ScanSession.Request(
            tracker: tracker, duration: duration > 0 ? .clampedSeconds(duration) : nil,
            serviceUUIDs: uuids)
        let session = ScanSession(operationID: 0, request: request, reporting: events.reporting, stopped: events.stopped)
        let backend = self.backend
        let logger = self.logger
        let task = Task {
            let (discoveries, error, _) = await session.run(backend: backend)
            if let forgotten = session.forgottenSummary { logger.warning("\(forgotten)") }
            session.finish(discoveries: discoveries, error: error)
        }
        events.continuation.onTermination = {
            session.requestStop(error: nil)
            _ = task
        }
        return events.stream
    }

    /// Connects to a peripheral (several may be connected at once) and returns it once the
    /// ATT MTU is exchanged and Service Changed indications are on. Cancelling the calling
    /// task abandons the attempt.
    public func connect(_ peripheral: PeripheralIdentifier, timeout: Timeout = .seconds(30)) async throws(BluejayError) -> RemotePeripheral {
        let connection = try await backend.connect(to: peripheral, timeout: timeout)
        // A bonded peer reached at a private address is known by its identity.
        let peripheral = connection.identity.map { PeripheralIdentifier(address: $0, name: peripheral.name) } ?? peripheral
        let link = PeripheralLink(connection: connection, identifier: peripheral)
        let changes = connection.serviceChanges()
        switch await connection.prepareCachedDatabase(timeLimit: operationTimeout.duration, clock: backend.clock) {
        case .success(.notEligible): break
        case let .success(outcome): logger.info("database of \(peripheral): \(outcome)")
        case let .failure(error): logger.info("cached database of \(peripheral) not used: \(error)")
        }
        do {
            try await withTimeLimit(operationTimeout.duration, clock: backend.clock, operation: "enabling Service Changed indications") {
                _ = try await connection.enableServiceChangedIndications()
            }
        } catch {
            logger.info("Service Changed indications of \(peripheral) not enabled: \(error)")
        }
        var peripheralLogger = logger
        peripheralLogger[metadataKey: "peripheral"] = "\(peripheral)"
        let remote = RemotePeripheral(link: link, backend: backend, changes: changes, operationTimeout: operationTimeout, clock: backend.clock,
                                      logger: peripheralLogger)
        state.withLock { $0.peripherals[ObjectIdentifier(remote)] = remote }
        Task { [weak self, remote] in
            _ = try? await remote.waitForDisconnection()
            _ = self?.state.withLock { $0.peripherals.removeValue(forKey: ObjectIdentifier(remote)) }
        }
        logger.info("connected to \(peripheral), ATT MTU \(link.mtu)")
        return remote
    }

    /// Disconnects every peripheral and, if this central opened the controller, closes it.
    public func shutdown() async {
        for peripheral in peripherals { try? await peripheral.disconnect() }
        if ownsHost { await backend.shutdown() }
    }
}
