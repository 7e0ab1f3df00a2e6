import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
@testable import BluetoothVirtual
import Synchronization

/// A central host on a manual clock, connected over a real-time virtual link to a raw
/// peripheral; `filter` sits between the central's host and its controller.
struct CentralHostRig {
    let clock: ManualClock
    let filter: FilteringTransport
    let host: LEHost
    let peripheral: HCITestHost
    let connection: Connection

    static func make(supervisionTimeout: UInt16 = 100) async throws -> CentralHostRig {
        let link = VirtualLink()
        let centralController = link.addController(name: "central", address: TestAddresses.central)
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let clock = ManualClock()
        var configuration = HostConfiguration()
        configuration.exchangesMTUOnConnect = false
        configuration.clock = .manual(clock)
        let filter = FilteringTransport(centralController.makeTransport())
        let host = LEHost(transport: filter, configuration: configuration)
        let peripheral = HCITestHost(peripheralController)
        try await host.powerOn()
        try await peripheral.initialize()
        try await peripheral.advertise()
        var request = ConnectionRequest()
        request.supervisionTimeout = supervisionTimeout
        let connection = try await host.connect(to: peripheral.publicAddress, request: request, timeout: .seconds(5))
        return CentralHostRig(clock: clock, filter: filter, host: host, peripheral: peripheral, connection: connection)
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
