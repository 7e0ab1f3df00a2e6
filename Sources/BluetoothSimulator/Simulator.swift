import BluetoothCore
import BluetoothHost
import BluetoothTransport
import BluetoothVirtual
import Logging
import Synchronization

/// A virtual radio world for tests and demos: one `VirtualLink` with simulated
/// peripherals on it and the controller(s) an app's central runs on.
///
/// ```swift
/// let simulator = Simulator()
/// let sensor = try await simulator.addHeartRateSensor()
/// let bluejay = Bluejay()
/// bluejay.start(mode: .new(StartOptions(transport: .transport(simulator.centralTransport()))))
/// // scan, connect to sensor.device.peripheralIdentifier, read, listen…
/// await simulator.shutdown()
/// ```
///
/// The central's controller sits at the origin; peripherals at their declared positions
/// (1 m away by default).
public final class Simulator: Sendable {
    /// The radio medium everything is on.
    public let link: VirtualLink
    /// The clock of the peripherals' own timers (notification rates, response delays).
    public let clock: BluetoothClock
    private let ownsLink: Bool
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var devices: [SimulatedDevice] = []
        var sensors: [HeartRateSensor] = []
        var uartDevices: [UARTDevice] = []
        var centrals: [String: VirtualController] = [:]
        var isShutDown = false
    }

    /// A simulator on a new link of its own.
    /// - Parameters:
    ///   - logger: where the simulated devices log.
    ///   - timeScale: simulated seconds per real second; above 1 the radio (advertising,
    ///     connection events, supervision timeouts) runs faster, which keeps tests of
    ///     timeouts short. The peripherals' own timers (notification rates, response delays)
    ///     run on `clock`.
    ///   - seed: makes advertising delays repeatable.
    ///   - clock: the clock of the peripherals' timers: real time by default; a manual clock
    ///     makes a sensor measure only when a test moves time.
    public convenience init(timeScale: Double = 1, seed: UInt64? = nil, clock: BluetoothClock = .continuous,
                            logger: Logger = Logger(label: "bluejay.simulator")) {
        self.init(link: VirtualLink(configuration: VirtualLink.Configuration(timeScale: timeScale, seed: seed), logger: logger),
                  ownsLink: true, clock: clock, logger: logger)
    }

    /// A simulator on an existing link, e.g. Bluejay's `InProcessRadio.link`, so that a
    /// Bluejay started with the transport `virtual` hears its peripherals. ``shutdown()``
    /// then stops the peripherals but leaves the link running.
    /// The peripherals' timers run on `clock`, by default the link's (`VirtualLink.hostClock`).
    public convenience init(link: VirtualLink, clock: BluetoothClock? = nil, logger: Logger = Logger(label: "bluejay.simulator")) {
        self.init(link: link, ownsLink: false, clock: clock ?? link.hostClock, logger: logger)
    }

    private init(link: VirtualLink, ownsLink: Bool, clock: BluetoothClock, logger: Logger) {
        self.link = link
        self.clock = clock
        self.ownsLink = ownsLink
        self.logger = logger
    }

    // MARK: The app's central

    /// The controller the app's central runs on, made on first use at the origin. Each name
    /// is a controller of its own (for tests with several centrals).
    public func centralController(named name: String = "central") -> VirtualController {
        state.withLock { state in
            if let existing = state.centrals[name] { return existing }
            let controller = link.addController(name: name, address: SimulatedPeripheral.centralAddress(forName: name))
            state.centrals[name] = controller
            return controller
        }
    }

    /// A new HCI transport to the central's controller: pass it to Bluejay,
    /// `StartOptions(transport: .transport(simulator.centralTransport()))`, or to an
    /// `LEHost`. A new transport replaces the previous one of the same controller.
    public func centralTransport(named name: String = "central") -> VirtualControllerTransport {
        centralController(named: name).makeTransport()
    }

    // MARK: Peripherals

    /// Starts a declared peripheral on the link; it advertises unless declared otherwise.
    /// An address already on the link is changed (last octet counted up) to stay unique.
    @discardableResult
    public func add(_ peripheral: SimulatedPeripheral) async throws(SimulatorError) -> SimulatedDevice {
        guard !isShutDown else { throw .stopped }
        var declaration = peripheral
        declaration.address = uniqueAddress(declaration.address ?? SimulatedPeripheral.address(forName: declaration.name))
        let device = try await SimulatedDevice.start(declaration, on: link, clock: clock, logger: logger)
        state.withLock { $0.devices.append(device) }
        return device
    }

    /// Starts a ``HeartRateSensor``.
    @discardableResult
    public func addHeartRateSensor(_ configuration: HeartRateSensor.Configuration = HeartRateSensor.Configuration()) async throws(SimulatorError) -> HeartRateSensor {
        let energy = EnergyExpendedCounter()
        let device = try await add(HeartRateSensor.declaration(configuration, energy: energy))
        let sensor = HeartRateSensor(device: device, configuration: configuration, energy: energy)
        state.withLock { $0.sensors.append(sensor) }
        return sensor
    }

    /// Starts a ``UARTDevice``.
    @discardableResult
    public func addUARTDevice(_ configuration: UARTDevice.Configuration = UARTDevice.Configuration()) async throws(SimulatorError) -> UARTDevice {
        let device = try await add(UARTDevice.declaration(configuration))
        let uart = UARTDevice(device: device, configuration: configuration)
        state.withLock { $0.uartDevices.append(uart) }
        return uart
    }

    /// The peripherals running now, in the order added.
    public var devices: [SimulatedDevice] { state.withLock { $0.devices.filter { !$0.isStopped } } }

    /// Stops a peripheral and takes it off the link.
    public func remove(_ device: SimulatedDevice) async {
        await device.stop()
        state.withLock { $0.devices.removeAll { $0 === device } }
    }

    // MARK: Lifetime

    /// Stops every peripheral, closes the centrals' transports and, if the simulator made
    /// the link, shuts it down. Idempotent.
    public func shutdown() async {
        let (devices, sensors, uarts, centrals) = state.withLock { state in
            defer {
                state.isShutDown = true
                state.devices = []
                state.sensors = []
                state.uartDevices = []
                state.centrals = [:]
            }
            return (state.devices, state.sensors, state.uartDevices, Array(state.centrals.values))
        }
        sensors.forEach { $0.stopGenerating() }
        uarts.forEach { $0.stopAnswering() }
        for device in devices { await device.stop() }
        if ownsLink {
            link.shutdown()
        } else {
            centrals.forEach { link.removeController($0) }
        }
    }

    /// Whether ``shutdown()`` was called.
    public var isShutDown: Bool { state.withLock { $0.isShutDown } }

    private func uniqueAddress(_ address: BluetoothAddress) -> BluetoothAddress {
        let taken = Set(link.controllers.map(\.address))
        var bytes = address.bytes
        var candidate = address
        var attempts = 0
        while taken.contains(candidate), attempts < 256 {
            bytes[5] &+= 1
            candidate = BluetoothAddress(bytes: bytes) ?? address
            attempts += 1
        }
        return candidate
    }
}

extension SimulatedPeripheral {
    /// `C0:CE` then four bytes of the name's hash: the central controllers' addresses.
    static func centralAddress(forName name: String) -> BluetoothAddress {
        var bytes = address(forName: name).bytes
        bytes[1] = 0xCE
        return BluetoothAddress(bytes: bytes) ?? .zero
    }
}
