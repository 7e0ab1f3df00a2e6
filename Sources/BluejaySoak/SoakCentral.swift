import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Dispatch
import Logging
import Synchronization

/// One central of the run: a Bluejay on its own virtual controller, running a loop of
/// random operations against the peripherals until the load ends.
final class SoakCentral: Sendable {
    let index: Int
    let name: String
    let controller: VirtualController
    let bluejay: Bluejay
    let peripherals: [SoakPeripheral]
    /// How many centrals the run has (each peripheral has two characteristics for each).
    let centralCount: Int
    let context: SoakContext
    /// Restart Bluejay after a Hardware Error (see ``SoakSettings/appRecovery``).
    let appRecovery: Bool
    private let observer: DisconnectionObserver
    let state: Mutex<State>

    struct State {
        var random: SoakGenerator
        /// A new transport to switch to: the controller was reset and its old transport closed.
        var pendingTransport: VirtualControllerTransport?
        /// The controller reported a Hardware Error: start Bluejay again.
        var restartRequested = false
        /// When an operation last succeeded (for the liveness check).
        var lastSuccess: ContinuousClock.Instant?
        /// The last things this central did, quoted when a value read back is wrong.
        var journal: [String] = []
        /// What each of this central's characteristics may hold, by peripheral index.
        var shortValues: [Int: ValueExpectation] = [:]
        var longValues: [Int: ValueExpectation] = [:]
    }

    init(index: Int, of centralCount: Int, link: VirtualLink, peripherals: [SoakPeripheral], seed: UInt64, appRecovery: Bool,
         context: SoakContext) {
        self.index = index
        self.appRecovery = appRecovery
        self.centralCount = centralCount
        name = "soak-central-\(index)"
        controller = link.addController(name: name, address: Self.address(index: index),
                                        position: VirtualPosition(x: Double(index) * 0.5, y: 0))
        bluejay = Bluejay(logger: Logger(label: "soak.\(name)"))
        self.peripherals = peripherals
        self.context = context
        observer = DisconnectionObserver(audit: context.audit, central: index)
        state = Mutex(State(random: .derived(from: seed, stream: 0xCE00 + UInt64(index))))
        bluejay.register(connectionObserver: observer)
        observer.journal.withLock { $0 = { [weak self] entry in self?.note(entry) } }
        context.lifetimes.track(bluejay, as: "Bluejay")
    }

    // MARK: Life

    /// Starts Bluejay on a new transport to the controller (the one a controller reset left,
    /// if any) and waits until it is ready.
    func start() async throws(BluejayError) {
        let transport = state.withLock { state in
            defer { state.pendingTransport = nil }
            return state.pendingTransport
        } ?? controller.makeTransport()
        context.lifetimes.track(transport, as: "VirtualControllerTransport")
        var host = HostConfiguration()
        host.deviceName = name
        bluejay.start(mode: .new(StartOptions(transport: .transport(transport), operationTimeout: .seconds(SoakSettings.operationTimeout),
                                              hostConfiguration: host)))
        try await bluejay.waitUntilReady()
        guard let started = bluejay.host else { return }
        context.lifetimes.track(started, as: "LEHost")
        context.lifetimes.track(await started.controller, as: "HCIController")
        context.lifetimes.track(await started.server, as: "GATTServer")
        guard appRecovery else { return }
        // The stream ends with the host's transport.
        let events = await started.events()
        context.tasks.spawn("\(name) hardware-error watcher") { [self] in
            for await event in events {
                if case .hardwareError = event { state.withLock { $0.restartRequested = true } }
            }
        }
    }

    /// Stops Bluejay (disconnecting, closing its controller).
    func stop() async {
        await bluejay.stop()
    }

    /// The controller resets, and its transport closes with it, as a USB adapter that
    /// re-enumerates: the host sees its transport end, and the app starts Bluejay again on
    /// the new one (at the top of its next step).
    func controllerDidReset() {
        controller.reset()
        let transport = controller.makeTransport()
        state.withLock { $0.pendingTransport = transport }
    }

    // MARK: The loop

    /// Operates until `deadline`, one operation at a time.
    func run(until deadline: ContinuousClock.Instant) async {
        while ContinuousClock.now < deadline, !Task.isCancelled {
            let recovery = state.withLock { state in
                defer { state.restartRequested = false }
                return state.pendingTransport != nil || state.restartRequested
            }
            if recovery {
                await perform(.recover)
                continue
            }
            if bluejay.isConnecting {
                // Auto-reconnect is under way: let it finish (it has its own timeout).
                try? await Task.sleep(for: .milliseconds(20))
                continue
            }
            let mix = bluejay.isConnected ? SoakOperation.connectedMix : SoakOperation.disconnectedMix
            let (operation, pause) = state.withLock { state in
                (state.random.weighted(mix) ?? .read, state.random.milliseconds(SoakSettings.thinkTime))
            }
            await perform(operation)
            if pause > .zero { try? await Task.sleep(for: pause) }
        }
    }

    /// Runs `operation` under the hang limit and counts how it ended.
    func perform(_ operation: SoakOperation) async {
        let work: @Sendable () async throws -> Void = { [self] in try await self.execute(operation) }
        let began = ContinuousClock.now
        let outcome = await OperationGuard.run("\(name) \(operation.rawValue)", limit: SoakSettings.operationHangLimit, tasks: context.tasks,
                                               monitor: context.hangs, work)
        let time = ContinuousClock.now - began
        switch outcome {
        case .succeeded:
            context.statistics.succeeded(operation, in: time)
            state.withLock { $0.lastSuccess = .now }
            note("\(operation.rawValue) ok")
        case let .failed(type):
            note("\(operation.rawValue) failed: \(type)")
            context.statistics.failed(operation, type: type, in: time)
        case .hung:
            context.statistics.failed(operation, type: "hang", in: time)
            context.statistics.hang("\(name): \(operation.rawValue) did not return within \(SoakSettings.operationHangLimit); its last steps:\n      "
                + journal.joined(separator: "\n      "))
        }
    }

    /// How many entries the journal keeps.
    static let journalLength = 24

    /// Adds to the journal.
    func note(_ entry: String) {
        let stamp = ContinuousClock.now
        state.withLock { state in
            state.journal.append("\(stamp.soakMilliseconds) \(entry)")
            if state.journal.count > Self.journalLength { state.journal.removeFirst(state.journal.count - Self.journalLength) }
        }
    }

    /// The journal, oldest first.
    var journal: [String] { state.withLock { $0.journal } }

    /// When an operation last succeeded.
    var lastSuccess: ContinuousClock.Instant? { state.withLock { $0.lastSuccess } }

    /// The address of central `index`'s controller.
    static func address(index: Int) -> BluetoothAddress {
        BluetoothAddress(bytes: [0xC0, 0x50, 0xCE, 0x00, 0x00, UInt8(index + 1)]) ?? .zero
    }

    /// The index of the central whose controller has `address`, if it is one.
    static func index(of address: BluetoothAddress) -> Int? {
        let bytes = address.bytes
        guard bytes.count == 6, Array(bytes.prefix(5)) == [0xC0, 0x50, 0xCE, 0x00, 0x00], bytes[5] > 0 else { return nil }
        return Int(bytes[5]) - 1
    }

    /// The peripheral of the run that `identifier` names.
    func peripheral(_ identifier: PeripheralIdentifier?) -> SoakPeripheral? {
        guard let identifier else { return nil }
        return peripherals.first { $0.identifier == identifier }
    }
}

/// Records the central's disconnections as Bluejay reports them (on its callback queue,
/// before it decides to reconnect) as link breaks for the delivery audit.
private final class DisconnectionObserver: ConnectionObserver {
    let audit: DeliveryAudit
    let central: Int
    /// The central's journal (set once the central is made).
    let journal = Mutex<(@Sendable (String) -> Void)?>(nil)

    init(audit: DeliveryAudit, central: Int) {
        self.audit = audit
        self.central = central
    }

    func connected(to peripheral: PeripheralIdentifier) {
        journal.withLock { $0 }?("connected to \(peripheral.name ?? "?")")
    }

    func disconnected(from peripheral: PeripheralIdentifier) {
        audit.linkBroke(central: central, peripheral: nil, at: .now, reason: "disconnected (central's view)")
        journal.withLock { $0 }?("disconnected from \(peripheral.name ?? "?")")
    }
}

extension ContinuousClock.Instant {
    /// The first instant a journal asked for.
    private static let journalOrigin = ContinuousClock.now

    /// Milliseconds since the first journal entry, for journals.
    var soakMilliseconds: Int64 {
        let (seconds, attoseconds) = (self - Self.journalOrigin).components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
