import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
@testable import BluetoothVirtual
import Synchronization

/// One of our hosts (the central, behind a ``FilteringTransport``) against a raw HCI peripheral
/// (`HCITestHost`) that a test scripts packet by packet, as a broken or hostile peer. Not a
/// ``TwoDevices``: there both ends are our hosts, here one end is no host at all.
struct CentralHostRig {
    let clock: ManualClock
    let filter: FilteringTransport
    let host: LEHost
    let peripheral: HCITestHost
    let connection: Connection

    /// A central host on a manual clock, connected over a real-time virtual link to the raw
    /// peripheral; `security` is the host's.
    static func make(supervisionTimeout: UInt16 = 100, security: SecurityManagerSettings = SecurityManagerSettings()) async throws -> CentralHostRig {
        let clock = ManualClock()
        let rig = try await unconnected(clock: clock, security: security)
        var request = ConnectionRequest()
        request.supervisionTimeout = supervisionTimeout
        let connection = try await rig.host.connect(to: rig.peripheral.publicAddress, request: request, timeout: .seconds(5))
        return CentralHostRig(clock: clock, filter: rig.filter, host: rig.host, peripheral: rig.peripheral, connection: connection)
    }

    /// The rig before the central connects: the host powered on, the raw peripheral advertising.
    struct Unconnected {
        let link: VirtualLink
        let centralController: VirtualController
        let peripheralController: VirtualController
        let filter: FilteringTransport
        let host: LEHost
        let peripheral: HCITestHost
    }

    /// The host's timers run on `clock` when given, else on the continuous clock.
    static func unconnected(link configuration: VirtualLink.Configuration = .init(), clock: ManualClock? = nil,
                            security: SecurityManagerSettings = SecurityManagerSettings()) async throws -> Unconnected {
        let link = VirtualLink(configuration: configuration)
        let centralController = link.addController(name: "central", address: TestAddresses.central)
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        var hostConfiguration = HostConfiguration()
        // The raw peripheral has no ATT server: no MTU exchange.
        hostConfiguration.exchangesMTUOnConnect = false
        hostConfiguration.security = security
        if let clock { hostConfiguration.clock = .manual(clock) }
        let filter = FilteringTransport(centralController.makeTransport())
        let host = LEHost(transport: filter, configuration: hostConfiguration)
        let peripheral = HCITestHost(peripheralController)
        try await host.powerOn()
        try await peripheral.initialize()
        try await peripheral.advertise()
        return Unconnected(link: link, centralController: centralController, peripheralController: peripheralController, filter: filter,
                           host: host, peripheral: peripheral)
    }

    private init(clock: ManualClock, filter: FilteringTransport, host: LEHost, peripheral: HCITestHost, connection: Connection) {
        self.clock = clock
        self.filter = filter
        self.host = host
        self.peripheral = peripheral
        self.connection = connection
    }

    /// Waits until a host task sleeps until `deadline` on the manual clock.
    func waitForTimer(at deadline: Duration) async throws {
        try await waitUntil("a timer at \(deadline)") { clock.nextDeadline == deadline }
    }
}
