import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
@testable import BluetoothVirtual
import Synchronization
import Testing

/// Link procedures whose end the controller or the peer may never report: every wait of the
/// host is bounded (on simulated time) and cancellable.
@Suite("Host: bounded link procedures", .timeLimit(.minutes(1)))
struct HostLinkProcedureTests {
    /// A central host on a manual clock, connected over a real-time virtual link to a raw
    /// peripheral; `filter` sits between the central's host and its controller.
    struct Rig {
        let clock: ManualClock
        let filter: FilteringTransport
        let host: LEHost
        let peripheral: HCITestHost
        let connection: Connection

        static func make(supervisionTimeout: UInt16 = 100) async throws -> Rig {
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
            return Rig(clock: clock, filter: filter, host: host, peripheral: peripheral, connection: connection)
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

    @Test func aDisconnectionTheControllerNeverReportsEndsAfterTheSupervisionTimeout() async throws {
        // 1 s supervision timeout; the controller's Disconnection Complete is lost.
        let rig = try await Rig.make(supervisionTimeout: 100)
        rig.filter.dropIncoming { if case .disconnectionComplete = $0 { return true }; return false }
        let events = await rig.host.events()
        let start = rig.clock.now
        let disconnecting = Task { [connection = rig.connection] in try await connection.disconnect() }
        let limit = Duration.seconds(1) + .seconds(2)
        try await rig.waitForTimer(at: start + limit)
        rig.clock.advance(to: start + limit - .milliseconds(1))
        #expect(rig.connection.isConnected, "not given up before the supervision timeout and its margin")
        rig.clock.advance(to: start + limit)
        try await disconnecting.value
        #expect(rig.connection.disconnectReason == .connectionTimeout)
        #expect(try await rig.connection.waitForDisconnection() == .connectionTimeout)
        for await event in events {
            if case let .disconnected(connection, reason) = event {
                #expect(connection === rig.connection)
                #expect(reason == .connectionTimeout)
                break
            }
        }
        // The handle is forgotten: requests on it fail at once instead of waiting.
        await #expect(throws: HostError.self) { _ = try await rig.connection.readRSSI() }
        await rig.host.shutdown()
    }

    @Test func aParameterUpdateThatNeverCompletesTimesOut() async throws {
        let rig = try await Rig.make()
        rig.filter.dropIncoming { if case .le(.connectionUpdateComplete) = $0 { return true }; return false }
        let start = rig.clock.now
        let update = Task { [connection = rig.connection] in
            try await connection.updateParameters(intervalRange: 24...24, peripheralLatency: 0, supervisionTimeout: 200)
        }
        try await rig.waitForTimer(at: start + .seconds(40))
        rig.clock.advance(to: start + .seconds(40))
        await #expect(throws: HostError.procedureTimeout("the connection parameter update")) { _ = try await update.value }
        #expect(rig.connection.isConnected, "a late procedure fails the caller, not the link")
        await rig.host.shutdown()
    }

    @Test func cancellingAWaitEndsItAndNotTheLink() async throws {
        let rig = try await Rig.make()
        rig.filter.dropIncoming { if case .le(.connectionUpdateComplete) = $0 { return true }; return false }
        let update = Task { [connection = rig.connection] in
            try await connection.updateParameters(intervalRange: 24...24, peripheralLatency: 0, supervisionTimeout: 200)
        }
        try await waitUntil("the update command went out") { rig.filter.sentCommands.contains(LEConnectionUpdateCommand.opcode) }
        update.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await update.value }

        let waiting = Task { [connection = rig.connection] in try await connection.waitForDisconnection() }
        waiting.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await waiting.value }
        #expect(rig.connection.isConnected)
        await rig.host.shutdown()
    }

    @Test func aPeripheralFloodingParameterRequestsGetsOneUpdateAtATimeAndItsNewest() async throws {
        let rig = try await Rig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        // Six requests in a row (within the controller's eight ACL buffers), each for a different
        // interval: the central accepts each, runs one update at a time and, after it, only the
        // newest that waited.
        let intervals: [UInt16] = (0..<6).map { 16 + 2 * $0 }
        for (index, interval) in intervals.enumerated() {
            let request = L2CAPConnectionParameterUpdateRequest(intervalMin: interval, intervalMax: interval, peripheralLatency: 0,
                                                                timeoutMultiplier: 300)
            let packet = LESignalingPacket(identifier: UInt8(index + 1), command: .connectionParameterUpdateRequest(request))
            try rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(channelID: .leSignaling, payload: packet.encode()))
        }
        let newest = intervals[intervals.count - 1]
        try await waitUntil("the newest interval applies", timeout: .seconds(20)) { rig.connection.parameters.interval == newest }
        let traffic = rig.filter.traffic
        var inFlight = 0, mostInFlight = 0, updates = 0
        for entry in traffic {
            switch entry {
            case .sent(LEConnectionUpdateCommand.opcode): inFlight += 1; updates += 1
            case .received(.le(.connectionUpdateComplete)): inFlight -= 1
            default: break
            }
            mostInFlight = max(mostInFlight, inFlight)
        }
        #expect(mostInFlight == 1, "one update at a time")
        #expect(updates < intervals.count, "\(updates) updates for \(intervals.count) requests: waiting ones are replaced by newer")
        await rig.host.shutdown()
    }
}

/// Sits between a host and its transport: records the commands the host sends and drops the
/// controller's events a test chooses.
final class FilteringTransport: HCITransport {
    /// A command the host sent or an event it received, in the order they passed.
    enum Traffic: Sendable {
        case sent(HCIOpcode)
        case received(HCIEvent)
    }

    private struct State {
        var dropsIncoming: @Sendable (HCIEvent) -> Bool = { _ in false }
        var traffic: [Traffic] = []
    }

    private let inner: any HCITransport
    private let state = Mutex(State())

    init(_ inner: any HCITransport) { self.inner = inner }

    var name: String { inner.name }

    /// The commands sent and the events delivered so far, in order.
    var traffic: [Traffic] { state.withLock { $0.traffic } }

    /// The opcodes of the commands sent so far, in order.
    var sentCommands: [HCIOpcode] {
        traffic.compactMap { if case let .sent(opcode) = $0 { return opcode } else { return nil } }
    }

    /// From now on, events for which `drops` is true never reach the host.
    func dropIncoming(_ drops: @escaping @Sendable (HCIEvent) -> Bool) {
        state.withLock { $0.dropsIncoming = drops }
    }

    func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        inner.start { [self] event in
            guard case let .packets(packets) = event else { return receiver(event) }
            let kept = state.withLock { state in
                packets.filter { packet in
                    guard packet.indicator == .event, let event = try? HCIEvent.decode(packet.bytes) else { return true }
                    if state.dropsIncoming(event) { return false }
                    state.traffic.append(.received(event))
                    return true
                }
            }
            if !kept.isEmpty { receiver(.packets(kept)) }
        }
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        if packet.indicator == .command, packet.bytes.count >= 2 {
            let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[0]) | UInt16(packet.bytes[1]) << 8)
            state.withLock { $0.traffic.append(.sent(opcode)) }
        }
        try inner.send(packet)
    }

    func close() { inner.close() }
}
