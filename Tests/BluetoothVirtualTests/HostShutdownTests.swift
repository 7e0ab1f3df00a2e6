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
        try await waitUntil("both waits") { clock.sleepingTaskCount >= 2 }
        clock.advance(by: .seconds(3))
        try await waitUntil("the shutdown") { finished.withLock { $0 } }
        await shutdown.value
        #expect(await host.connections.isEmpty)
        peripherals.forEach { $0.close() }
    }
}
