import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Synchronization
import Testing

@Suite("Host shutdown", .timeLimit(.minutes(1)))
struct HostShutdownTests {
    /// Found by the soak run: a peripheral whose controller had reset took 7 s per central
    /// to shut down (each Disconnect waits its supervision timeout and 2 s for a report that
    /// a reset controller never sends), 21 s with three centrals.
    @Test("Shutdown disconnects every link at once: a controller that reset reports no end, and one wait after another would add up")
    func shutdownDisconnectsEveryLinkAtOnce() async throws {
        // Not a TwoDevices: one host against two raw HCI peripherals.
        let link = VirtualLink()
        let clock = ManualClock()
        let controller = link.addController(name: "central", address: TestAddresses.central)
        let filter = FilteringTransport(controller.makeTransport())
        var configuration = HostConfiguration()
        configuration.exchangesMTUOnConnect = false
        configuration.clock = .manual(clock)
        let host = LEHost(transport: filter, configuration: configuration)
        try await host.powerOn()
        var request = ConnectionRequest()
        request.supervisionTimeout = 100
        var peripherals: [HCITestHost] = []
        for (index, address) in [TestAddresses.peripheral, TestAddresses.third].enumerated() {
            let peripheral = HCITestHost(link.addController(name: "peripheral \(index)", address: address, position: .init(x: 2, y: Double(index))))
            try await peripheral.initialize()
            try await peripheral.advertise()
            _ = try await host.connect(to: peripheral.publicAddress, request: request, timeout: nil)
            peripherals.append(peripheral)
        }
        #expect(await host.connections.count == 2)

        // The controller resets without a word: it knows neither link, and will report neither's end.
        controller.reset()
        let finished = Mutex(false)
        let shutdown = Task {
            await host.shutdown()
            finished.withLock { $0 = true }
        }
        // Both Disconnects go out before any time passes (one after another, the second
        // would wait for the first link's 3 s).
        let disconnectOpcode = DisconnectCommand.opcode
        try await waitUntil("a Disconnect for each link") { filter.sentCommands.filter { $0 == disconnectOpcode }.count == 2 }
        try await waitUntil("both refused") {
            filter.traffic.filter { traffic in
                guard case let .received(.commandStatus(status)) = traffic else { return false }
                return status.opcode == disconnectOpcode && status.status == .unknownConnectionIdentifier
            }.count == 2
        }
        // Each then waits its supervision timeout (1 s) and 2 s more for the report, at once.
        // (Counting sleepers would not do: the Disconnects' own command timers sleep on this
        // clock too until the host has handled their Command Status.)
        let reportDue = clock.now + .seconds(3)
        try await waitUntil("both waits") { clock.deadlines.filter { $0 == reportDue }.count == 2 }
        clock.advance(to: reportDue)
        try await waitUntil("the shutdown") { finished.withLock { $0 } }
        await shutdown.value
        #expect(await host.connections.isEmpty)
        peripherals.forEach { $0.close() }
    }

    /// Found as a flaky CLI capture test: `bluejay scan` stopped by SIGTERM cancels its scan's
    /// consumer, whose stream starts the scan's end in a task of its own; the shutdown that
    /// followed found no scan running and closed the transport before that LE Set Scan Enable
    /// (off) was answered, or even written. A real adapter was left scanning.
    @Test("Shutdown waits for a scan's end already on its way: the controller confirms it before the transport closes")
    func shutdownWaitsForTheScansEnd() async throws {
        let link = VirtualLink()
        let filter = FilteringTransport(link.addController(name: "scanner", address: TestAddresses.central).makeTransport())
        let logs = LogCapture()
        let host = LEHost(transport: filter, configuration: HostConfiguration(), logger: logs.logger)
        let info = try await host.powerOn()
        let scanEnable = info.supportsExtendedScanning ? LESetExtendedScanEnableCommand.opcode : LESetScanEnableCommand.opcode
        let discoveries = try await host.scan()
        let consumer = Task { for try await _ in discoveries {} }
        // The controller's answer to the scan's end waits until the shutdown has begun.
        filter.holdIncoming { event in
            guard case let .commandComplete(complete) = event else { return false }
            return complete.opcode == scanEnable
        }
        consumer.cancel()
        try await waitUntil("the scan's end written") { filter.sentCommands.filter { $0 == scanEnable }.count == 2 }
        #expect(await host.isScanning == false)

        let shutdown = Task { await host.shutdown() }
        try await waitUntil("the shutdown waiting for the scan's end, or the transport closed") {
            logs.contains("waiting for the controller to confirm the end of the scan") || filter.isClosed
        }
        filter.releaseHeld()
        await shutdown.value

        let traffic = filter.traffic
        let answered = traffic.lastIndex { item in
            guard case let .received(.commandComplete(complete)) = item else { return false }
            return complete.opcode == scanEnable
        }
        let closed = traffic.firstIndex { if case .closed = $0 { return true } else { return false } }
        let order = try #require(answered.flatMap { answered in closed.map { (answered, $0) } }, "\(traffic)")
        #expect(order.0 < order.1, "the transport closed before the controller confirmed the scan's end: \(traffic)")
    }

    /// `bluejay advertise` stopped by SIGTERM stopped its advertising from its cancelled task,
    /// so the command was never sent: a real adapter went on advertising after the process.
    @Test("Shutdown from a cancelled task stops advertising and removes the advertising sets before the transport closes")
    func shutdownStopsAdvertising() async throws {
        let link = VirtualLink()
        let filter = FilteringTransport(link.addController(name: "advertiser", address: TestAddresses.peripheral).makeTransport())
        let host = LEHost(transport: filter, configuration: HostConfiguration())
        try await host.powerOn()
        try #require(await host.supportsExtendedAdvertising, "the virtual controller has extended advertising")
        let data = AdvertisingData([.completeLocalName("Left On?")])
        try await host.startAdvertising(data)
        _ = try await host.startAdvertisingSet(data, parameters: ExtendedAdvertisingParameters(isConnectable: false))
        #expect(await host.isAdvertising)
        #expect(await host.activeAdvertisingSets.count == 1)

        // As the CLI's task is cancelled by a signal before it shuts the host down.
        let shutdown = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await host.shutdown()
        }
        await shutdown.value

        let sent = filter.sentCommands
        let closed = try #require(filter.traffic.firstIndex { if case .closed = $0 { return true } else { return false } })
        let beforeClose = filter.traffic[..<closed].compactMap { item -> HCIOpcode? in
            if case let .sent(opcode) = item { return opcode } else { return nil }
        }
        // The controller has extended advertising: the legacy advertising runs on a set of its
        // own, with legacy PDUs, and no legacy command is ever sent (Core 6.0, Vol 4, Part E, 3.1.1).
        #expect(!beforeClose.contains { LECommandFamily(opcode: $0) == .legacy }, "\(sent)")
        #expect(beforeClose.filter { $0 == LESetExtendedAdvertisingEnableCommand.opcode }.count == 4,
                "both sets on, the legacy advertising's set off, then every set off: \(sent)")
        #expect(beforeClose.contains(LERemoveAdvertisingSetCommand.opcode), "the legacy advertising's set removed: \(sent)")
        #expect(beforeClose.contains(LEClearAdvertisingSetsCommand.opcode), "\(sent)")
    }

    /// A user who has been asked and never answers; the question ends when the pairing does.
    final class UnansweringAgent: PairingAgent {
        private let asked = Mutex<[CheckedContinuation<Void, Never>]>([])
        var wasAsked: Bool { !asked.withLock { $0.isEmpty } }

        func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    asked.withLock { $0.append(continuation) }
                }
            } onCancel: {
                asked.withLock { asked in
                    asked.forEach { $0.resume() }
                    asked = []
                }
            }
            return false
        }
    }

    /// Found reading the host's per-link state: the loss of the transport ended each link's
    /// GATT, but not its pairing, so a caller of pair() waited on until the Security Manager
    /// Timer (30 s; for ever on a stopped clock).
    @Test("A pairing waiting for its user when the controller goes away ends with the transport, its question withdrawn")
    func aPairingEndsWithTheTransport() async throws {
        let clock = ManualClock()
        let security = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        let agent = UnansweringAgent()
        var central = TwoDevices.Device.central
        central.security = security
        central.pairingAgent = agent
        var peripheral = TwoDevices.Device.peripheral
        peripheral.security = security
        peripheral.pairingAgent = UnansweringAgent()
        let devices = try await TwoDevices(.init(clock: clock, central: central, peripheral: peripheral))
        let (connection, _) = try await devices.connect()
        let pairing = Task { try await devices.central.pair(connection) }
        try await waitUntil("the central's user is asked to confirm") { agent.wasAsked }

        devices.link.removeController(devices.centralController)
        let outcome = try await withTimeout("the pairing's end", .seconds(10)) { await pairing.result }
        guard case let .failure(error) = outcome else {
            Issue.record("the pairing succeeded without its user")
            return
        }
        guard case HostError.transportClosed? = error as? HostError else {
            Issue.record("the pairing ended with \(error), not the transport's loss")
            return
        }
        try await waitUntil("the question withdrawn") { !agent.wasAsked }
        await devices.shutdown()
    }

    /// Found in review: a Connection Complete on a handle the host still had a link on (the
    /// controller never reported that link's end; real controllers reuse handles) replaced that
    /// link's record, and the callers waiting on the old link were never answered.
    @Test("A new link on the handle of one whose end was never reported ends that one: its pairing's caller is answered")
    func aLinkWhoseEndWasLostIsEndedByTheNextOnItsHandle() async throws {
        let security = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        var central = TwoDevices.Device.central
        central.security = security
        central.isFiltered = true
        // Neither user answers: the pairing holds until its link ends.
        let agent = UnansweringAgent()
        central.pairingAgent = agent
        var peripheral = TwoDevices.Device.peripheral
        peripheral.security = security
        peripheral.pairingAgent = UnansweringAgent()
        let devices = try await TwoDevices(.init(central: central, peripheral: peripheral))
        let filter = try #require(devices.centralFilter)
        // The central's LE Connection Complete, kept to be told again.
        filter.holdIncoming { event in
            switch event {
            case .le(.connectionComplete), .le(.enhancedConnectionComplete), .le(.enhancedConnectionCompleteV2): return true
            default: return false
            }
        }
        let connecting = Task { try await devices.connect() }
        try await waitUntil("the central's link reported") { !filter.held.isEmpty }
        let completion = filter.held
        filter.releaseHeld()
        let (first, _) = try await connecting.value
        let pairing = Task { try await devices.central.pair(first) }
        try await waitUntil("the central's user is asked to confirm") { agent.wasAsked }

        // The controller reports a new link on the same handle: the first one's end was lost.
        filter.inject(completion)
        let outcome = try await withTimeout("the first link's pairing", .seconds(10)) { await pairing.result }
        guard case let .failure(error) = outcome, case HostError.disconnected? = error as? HostError else {
            Issue.record("the first link's pairing ended with \(outcome), not its link's end")
            return
        }
        #expect(!first.isConnected)
        let now = await devices.central.connections
        #expect(now.count == 1 && now.first !== first && now.first?.handle == first.handle)
        await devices.shutdown()
    }
}
