import BluetoothCore
import BluetoothHost
import BluetoothSimulator
import BluetoothVirtual
import Logging
import Synchronization

/// One peripheral of the run: a ``SimulatedDevice`` (a host of this stack with a
/// PeripheralManager and GATT server, on a virtual controller of its own) publishing the
/// soak service, numbering its notifications and indications, and advertising whenever it
/// can take another central. A reboot (the controller-reset fault) replaces the device with
/// a new one at the same address.
final class SoakPeripheral: Sendable {
    let index: Int
    let name: String
    let address: BluetoothAddress
    /// The ATT MTU its server accepts: small ones make reads and writes of long values
    /// long procedures (Read Blob, Prepare and Execute Write).
    let mtu: UInt16
    private let link: VirtualLink
    private let centrals: Int
    /// Reboot after a Hardware Error (see ``SoakSettings/appRecovery``).
    private let appRecovery: Bool
    private let context: SoakContext
    private let state: Mutex<State>

    private struct State {
        var device: SimulatedDevice?
        /// Counts reboots: a central that wrote before a reboot may read the initial value after it.
        var generation = 0
        /// The next number of each numbered characteristic.
        var sequences: [BluetoothUUID: UInt32] = [:]
        var random: SoakGenerator
        /// The tasks of the current device (notifier, indicator, watchers).
        var tasks: [Task<Void, Never>] = []
        /// When a central last connected (for the liveness check).
        var lastConnection: ContinuousClock.Instant?
        var isStopped = false
    }

    /// MTUs of the peripherals, in turn.
    static let mtus: [UInt16] = [23, 64, 517, 185]

    init(index: Int, link: VirtualLink, centrals: Int, seed: UInt64, appRecovery: Bool, context: SoakContext) {
        self.appRecovery = appRecovery
        self.index = index
        name = "soak-peripheral-\(index)"
        address = BluetoothAddress(bytes: [0xC0, 0x50, 0xA4, 0x00, 0x00, UInt8(index + 1)]) ?? .zero
        mtu = Self.mtus[index % Self.mtus.count]
        self.link = link
        self.centrals = centrals
        self.context = context
        state = Mutex(State(random: .derived(from: seed, stream: 0x5000 + UInt64(index))))
    }

    /// How centrals name it.
    var identifier: PeripheralIdentifier {
        PeripheralIdentifier(address: DeviceAddress(address, type: .public), name: name)
    }

    /// When a central last connected.
    var lastConnection: ContinuousClock.Instant? { state.withLock { $0.lastConnection } }

    /// Reboots so far (see ``State/generation``).
    var generation: Int { state.withLock { $0.generation } }


    /// The controller of the current device (nil while rebooting).
    var controller: VirtualController? { state.withLock { $0.device?.controller } }

    // MARK: Life

    /// Starts the device, its numbered streams and its advertising.
    func start() async throws {
        var declaration = SimulatedPeripheral(name: name, address: address, advertisingInterval: .milliseconds(40),
                                              advertisedServiceUUIDs: [SoakIdentifiers.serviceUUID],
                                              services: [service()], position: VirtualPosition(x: 1 + Double(index) * 0.5, y: 1))
        declaration.preferredATTMTU = mtu
        let logger = Logger(label: "soak.\(name)")
        let device = try await SimulatedDevice.start(declaration, on: link, clock: .continuous, logger: logger)
        context.lifetimes.track(device, as: "SimulatedDevice")
        context.lifetimes.track(device.manager, as: "PeripheralManager")
        context.lifetimes.track(device.host, as: "LEHost")
        context.lifetimes.track(await device.host.controller, as: "HCIController")
        context.lifetimes.track(await device.host.server, as: "GATTServer")
        let connections = device.events()
        let hostEvents = await device.host.events()
        let tasks = [
            context.tasks.spawn("\(name) notifier") { [self] in await self.stream(.notifications, every: SoakSettings.notificationInterval, on: device) },
            context.tasks.spawn("\(name) indicator") { [self] in await self.stream(.indications, every: SoakSettings.indicationInterval, on: device) },
            context.tasks.spawn("\(name) advertising keeper") { [self] in await self.keepAdvertising(device, events: connections) },
            context.tasks.spawn("\(name) hardware-error handler") { [self] in await self.recoverFromHardwareErrors(device, events: hostEvents) },
        ]
        let stopped = state.withLock { state -> Bool in
            state.device = device
            state.tasks = tasks
            return state.isStopped
        }
        if stopped { await stop() }
    }

    /// Stops the device for good (shutdown).
    func stop() async {
        let (device, tasks) = state.withLock { state in
            state.isStopped = true
            defer {
                state.device = nil
                state.tasks = []
            }
            return (state.device, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        await device?.stop()
        for task in tasks { await task.value }
    }

    /// The controller resets without telling its host, and the device reboots: its links
    /// drop (the centrals find out by supervision timeout), it is off the air for `pause`,
    /// then a new host publishes the service again, with fresh values.
    func reboot(pause: Duration, resettingController: Bool = true) async throws {
        let (device, tasks) = state.withLock { state in
            defer {
                state.device = nil
                state.tasks = []
                state.generation += 1
            }
            return (state.device, state.tasks)
        }
        guard let device else { return }
        context.audit.linkBroke(central: nil, peripheral: index, at: .now, silent: true, reason: "reboot")
        if resettingController { device.controller?.reset() }
        tasks.forEach { $0.cancel() }
        await device.stop()
        for task in tasks { await task.value }
        try await Task.sleep(for: pause)
        guard !state.withLock({ $0.isStopped }) else { return }
        try await start()
    }

    // MARK: Behaviour

    private func service() -> SimulatedService {
        var characteristics = [
            SimulatedCharacteristic(uuid: SoakIdentifiers.notifyingUUID, properties: [.read, .notify], value: NumberedValue.encode(0, peripheral: index, padding: 0)),
            SimulatedCharacteristic(uuid: SoakIdentifiers.indicatingUUID, properties: [.read, .indicate],
                                    value: NumberedValue.encode(0, peripheral: index, padding: 0)),
        ]
        for central in 0..<centrals {
            characteristics.append(SimulatedCharacteristic(uuid: SoakIdentifiers.shortUUID(central: central),
                                                           properties: [.read, .write, .writeWithoutResponse],
                                                           value: SoakIdentifiers.initialValue, maximumValueLength: SoakIdentifiers.shortValueLimit))
            characteristics.append(SimulatedCharacteristic(uuid: SoakIdentifiers.longUUID(central: central), properties: [.read, .write],
                                                           value: SoakIdentifiers.initialValue, maximumValueLength: SoakIdentifiers.longValueLimit))
        }
        return SimulatedService(uuid: SoakIdentifiers.serviceUUID, characteristics: characteristics)
    }

    /// Numbers and sends a value every `interval` to the subscribers of `stream`'s
    /// characteristic (a notification or an indication, as each asked), waiting for full
    /// queues to drain, and logs what it sent to whom (``DeliveryAudit``).
    private func stream(_ stream: NumberedStream, every interval: Duration, on device: SimulatedDevice) async {
        let characteristic = stream == .notifications ? SoakIdentifiers.notifyingUUID : SoakIdentifiers.indicatingUUID
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            guard !(await device.subscribers(of: characteristic).isEmpty) else { continue }
            let (sequence, padding) = state.withLock { state -> (UInt32, Int) in
                let next = state.sequences[characteristic, default: 0]
                state.sequences[characteristic] = next &+ 1
                return (next, Int.random(in: 0...16, using: &state.random))
            }
            let began = ContinuousClock.now
            do {
                let recipients = try await device.notify(NumberedValue.encode(sequence, peripheral: index, padding: padding), on: characteristic)
                context.audit.sent(peripheral: index, stream: stream, sequence: sequence, began: began, returned: .now,
                                   recipients: recipients.compactMap { $0.address.flatMap { SoakCentral.index(of: $0.address) } })
            } catch {
                // It may have reached some subscribers before it failed.
                context.audit.sent(peripheral: index, stream: stream, sequence: sequence, began: began, returned: .now, recipients: nil)
                if Task.isCancelled { return }
                context.statistics.peripheralError("notify: \(Self.errorType(error))")
            }
        }
    }

    /// Connectable advertising stops when a central connects; advertising again at once
    /// lets the other centrals connect too (the host itself restarts it when the last
    /// central that connected through it leaves).
    private func keepAdvertising(_ device: SimulatedDevice, events: AsyncStream<SimulatedDeviceEvent>) async {
        for await event in events {
            if case let .disconnected(central, _) = event {
                context.audit.linkBroke(central: central.address.flatMap { SoakCentral.index(of: $0.address) }, peripheral: index, at: .now,
                                        reason: "disconnected (peripheral's view)")
            }
            if case let .connected(central) = event, let index = central.address.flatMap({ SoakCentral.index(of: $0.address) }) {
                context.audit.linkUp(central: index, peripheral: self.index, at: .now)
            }
            guard case .connected = event, !Task.isCancelled else { continue }
            state.withLock { $0.lastConnection = .now }
            guard !(await device.isAdvertising) else { continue }
            do {
                try await device.startAdvertising()
            } catch {
                if Task.isCancelled || device.isStopped { return }
                context.statistics.peripheralError("advertise again: \(Self.errorType(error))")
            }
        }
    }

    /// A Hardware Error resets the controller: its links drop, it stops advertising, and it
    /// is back to its default event masks, which hide every LE event (connections) from the
    /// host. The host does not initialize it again, so the peripheral's app reboots the
    /// device (a new host initializes the controller), as it must today.
    private func recoverFromHardwareErrors(_ device: SimulatedDevice, events: AsyncStream<HostEvent>) async {
        for await event in events {
            guard case .hardwareError = event, !Task.isCancelled else { continue }
            guard appRecovery else { continue }
            // Not from this task: the reboot waits for the device's tasks, this one included.
            let statistics = context.statistics
            context.tasks.spawn("\(name) reboot after a hardware error") { [self] in
                do {
                    try await reboot(pause: .zero, resettingController: false)
                } catch {
                    statistics.peripheralError("reboot after a hardware error: \(Self.errorType(error))")
                }
            }
            return
        }
    }

    /// A short name for a simulator error.
    static func errorType(_ error: any Error) -> String {
        guard let error = error as? SimulatorError else { return String(describing: type(of: error)) }
        switch error {
        case let .peripheral(inner): return "peripheral (\(String(describing: inner).prefix(60)))"
        case .invalidDeclaration: return "invalidDeclaration"
        case .unknownCharacteristic: return "unknownCharacteristic"
        case .notSubscribed: return "notSubscribed"
        case .notConnected: return "notConnected"
        case .notVirtual: return "notVirtual"
        case let .timedOut(what): return "timedOut (\(what.prefix(40)))"
        case .stopped: return "stopped"
        }
    }
}
