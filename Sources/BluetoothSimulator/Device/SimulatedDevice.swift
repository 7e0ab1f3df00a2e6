import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import BluetoothVirtual
import Logging
import Synchronization

/// A ``SimulatedPeripheral`` brought to life: a host of this stack (`LEHost` with a
/// `PeripheralManager`) on its own controller, publishing the declared services and
/// advertising. On a virtual link it can also be moved, refuse connections and lose packets.
///
/// ```swift
/// let device = try await simulator.add(SimulatedPeripheral(name: "Thermo", services: [...]))
/// device.failNextRequests(.attError(.readNotPermitted), on: "2A1C")
/// try await device.notify([0x00, 0x70, 0x0E, 0x00, 0xFE], on: "2A1C")
/// try device.moveOutOfRange()
/// ```
public final class SimulatedDevice: Sendable {
    /// What it was started from.
    public let declaration: SimulatedPeripheral
    /// The peripheral role on its host: services, values, advertising.
    public let manager: PeripheralManager
    /// The host it runs on.
    public let host: LEHost
    /// Its virtual controller; `nil` when it runs on another controller (real, Bumble).
    public let controller: VirtualController?
    /// Its public address.
    public let address: BluetoothAddress
    let logger: Logger
    let readiness = ReadinessSignal()
    let state: Mutex<State>
    /// The streams of ``events()``.
    let eventListeners = AsyncStreamFanOut<SimulatedDeviceEvent>()

    struct Published: Sendable {
        var service: BluetoothUUID
        var characteristic: GATTPublishedCharacteristic
        var declared: SimulatedCharacteristic
    }

    struct State: Sendable {
        var published: [Published] = []
        var delays: [BluetoothUUID: Duration] = [:]
        var defaultDelay: Duration = .zero
        var failures = FailurePlan()
        var centrals: [UInt16: Central] = [:]
        var tasks: [Task<Void, Never>] = []
        var isStopped = false
    }


    /// The clock of its behaviour's timers: notification rates, response delays, chunk
    /// delays. (Its host's protocol timeouts stay in real time.)
    public let clock: BluetoothClock

    /// How a Bluejay central names it: its public address and name.
    public var peripheralIdentifier: PeripheralIdentifier {
        PeripheralIdentifier(address: deviceAddress, name: declaration.name)
    }

    /// Its address as centrals see it (public).
    public var deviceAddress: DeviceAddress { DeviceAddress(address, type: .public) }

    init(declaration: SimulatedPeripheral, host: LEHost, manager: PeripheralManager, controller: VirtualController?, address: BluetoothAddress,
         clock: BluetoothClock, logger: Logger) {
        self.declaration = declaration
        self.clock = clock
        self.host = host
        self.manager = manager
        self.controller = controller
        self.address = address
        self.logger = logger
        var initial = State()
        for service in declaration.services {
            for characteristic in service.characteristics where characteristic.responseDelay > .zero {
                initial.delays[characteristic.uuid] = characteristic.responseDelay
            }
        }
        state = Mutex(initial)
    }

    deinit {
        state.withLock { $0.tasks }.forEach { $0.cancel() }
        eventListeners.finish()
    }

    // MARK: Starting

    /// Starts a peripheral on a new controller of `link`, at its declared position, and
    /// (unless the declaration says otherwise) advertises. Its behaviour's timers run on
    /// `clock`, by default the link's (`VirtualLink/hostClock`).
    public static func start(_ declaration: SimulatedPeripheral, on link: VirtualLink, clock: BluetoothClock? = nil,
                             logger: Logger = Logger(label: "bluejay.simulator")) async throws(SimulatorError) -> SimulatedDevice {
        let address = declaration.address ?? SimulatedPeripheral.address(forName: declaration.name)
        let controller = link.addController(name: declaration.name, address: address, position: declaration.position)
        do {
            return try await start(declaration, transport: controller.makeTransport(), controller: controller, clock: clock ?? link.hostClock,
                                   logger: logger)
        } catch {
            link.removeController(controller)
            throw error
        }
    }

    /// Starts a peripheral on any controller (a real adapter, Bumble over TCP…): the
    /// transport is opened and the controller reset. Moving and link faults are not
    /// available there.
    public static func start(_ declaration: SimulatedPeripheral, transport: any HCITransport, clock: BluetoothClock = .continuous,
                             logger: Logger = Logger(label: "bluejay.simulator")) async throws(SimulatorError) -> SimulatedDevice {
        try await start(declaration, transport: transport, controller: nil, clock: clock, logger: logger)
    }

    private static func start(_ declaration: SimulatedPeripheral, transport: any HCITransport, controller: VirtualController?,
                              clock: BluetoothClock, logger: Logger) async throws(SimulatorError) -> SimulatedDevice {
        var configuration = HostConfiguration()
        configuration.deviceName = declaration.name
        configuration.preferredATTMTU = declaration.preferredATTMTU
        var hostLogger = logger
        hostLogger[metadataKey: "peripheral"] = "\(declaration.name)"
        let host = LEHost(transport: transport, configuration: configuration, logger: hostLogger)
        let manager = PeripheralManager(host: host, logger: hostLogger)
        do {
            try await manager.powerOn()
        } catch {
            await manager.powerOff()
            throw .peripheral(error)
        }
        await host.server.configure(declaration.serverSettings)
        let address = await host.controllerInfo?.address ?? controller?.address ?? .zero
        let device = SimulatedDevice(declaration: declaration, host: host, manager: manager, controller: controller, address: address,
                                     clock: clock, logger: hostLogger)
        do {
            await device.startObserving()
            try await device.publishServices()
            if declaration.advertisesAtStart { try await device.startAdvertising() }
        } catch {
            await device.stop()
            throw error
        }
        logger.info("simulated peripheral \(declaration.name) (\(address)) started")
        return device
    }

    // MARK: Stopping

    /// Stops it: disconnects every central, stops advertising, and takes its controller off
    /// the link. Idempotent.
    public func stop() async {
        let (tasks, wasStopped) = state.withLock { state in
            defer {
                state.isStopped = true
                state.tasks = []
            }
            return (state.tasks, state.isStopped)
        }
        guard !wasStopped else { return }
        tasks.forEach { $0.cancel() }
        readiness.signalAll()
        await manager.powerOff()
        eventListeners.finish()
        if let controller { controller.link.removeController(controller) }
        logger.info("simulated peripheral \(declaration.name) stopped")
    }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { state.withLock { $0.isStopped } }

    /// Keeps a task to cancel at ``stop()``; cancels it at once if already stopped.
    func own(_ task: Task<Void, Never>) {
        let stopped = state.withLock { state -> Bool in
            if !state.isStopped { state.tasks.append(task) }
            return state.isStopped
        }
        if stopped { task.cancel() }
    }

    // MARK: Events

    /// What happens to the peripheral from now on: connections, subscriptions, reads,
    /// writes, injected failures. The stream ends at ``stop()``.
    public func events() -> AsyncStream<SimulatedDeviceEvent> {
        eventListeners.makeStream()
    }

    /// The centrals connected now.
    public var connectedCentrals: [Central] {
        state.withLock { $0.centrals.values.sorted { $0.connectionHandle < $1.connectionHandle } }
    }

    func emit(_ event: SimulatedDeviceEvent) {
        eventListeners.yield(event)
    }

    /// Follows the manager's connection and subscription events.
    private func startObserving() async {
        let connections = await manager.connectionEvents()
        let subscriptions = await manager.subscriptionChanges()
        own(Task { [weak self] in
            for await event in connections { self?.handle(event) }
        })
        own(Task { [weak self] in
            for await change in subscriptions {
                self?.emit(.subscriptionChanged(change.central, characteristic: change.characteristic.uuid,
                                                isNotifying: change.isNotifying, isIndicating: change.isIndicating))
            }
        })
    }

    private func handle(_ event: PeripheralConnectionEvent) {
        switch event {
        case let .connected(central):
            state.withLock { $0.centrals[central.connectionHandle] = central }
            logger.debug("\(central) connected")
            emit(.connected(central))
        case let .disconnected(central, reason):
            state.withLock { $0.centrals[central.connectionHandle] = nil }
            readiness.signal(central.connectionHandle)
            logger.debug("\(central) disconnected: \(reason)")
            emit(.disconnected(central, reason: reason))
        case let .readyToUpdateSubscribers(central):
            readiness.signal(central.connectionHandle)
        case let .bondReplaced(central, replacement):
            logger.notice("\(central): \(replacement)")
        case let .identityResolved(central):
            state.withLock { $0.centrals[central.connectionHandle] = central }
            logger.debug("\(central): identity resolved")
        }
    }
}

extension SimulatedDevice: CustomStringConvertible {
    public var description: String { "simulated peripheral \(declaration.name) (\(address))" }
}
