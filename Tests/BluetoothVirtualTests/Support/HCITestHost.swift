import BluetoothCore
import BluetoothHCI
import BluetoothTransport
@testable import BluetoothVirtual
import Testing

/// What a test host receives from its controller.
enum Received: Sendable, CustomStringConvertible {
    case event(HCIEvent)
    case acl(ACLDataPacket)
    case undecodable([UInt8])
    case closed(TransportError?)

    var event: HCIEvent? {
        if case let .event(event) = self { return event }
        return nil
    }

    var le: HCILEMetaEvent? {
        if case let .event(.le(event)) = self { return event }
        return nil
    }

    var acl: ACLDataPacket? {
        if case let .acl(packet) = self { return packet }
        return nil
    }

    var description: String {
        switch self {
        case let .event(event): return "\(event)"
        case let .acl(packet): return "\(packet)"
        case let .undecodable(bytes): return "undecodable \(Hex.encode(bytes))"
        case let .closed(reason): return "closed \(String(describing: reason))"
        }
    }
}

/// A host made of raw HCI: sends command packets and decodes what comes back with the same
/// `HCIEvent.decode` the real host uses.
///
/// On a link with a manual clock (``VirtualLink/manual()``), every wait moves simulated time
/// from one link timer to the next until what it waits for has arrived, so a test runs the
/// same on a loaded machine; its time limits are simulated time. On a real-time link (or
/// through another transport), waits are in real time.
final class HCITestHost: Sendable {
    let controller: VirtualController
    let transport: any HCITransport
    let inbox: TestInbox<Received>
    /// The link's manual clock, when this host's packets come straight from the link.
    private let manualClock: ManualClock?

    /// A host on `transport`, by default a new in-process transport to `controller`.
    init(_ controller: VirtualController, transport: (any HCITransport)? = nil) {
        self.controller = controller
        self.transport = transport ?? controller.makeTransport()
        manualClock = transport == nil ? controller.link.manualClock : nil
        let link = controller.link
        let inbox = TestInbox<Received>(now: { link.now })
        self.inbox = inbox
        self.transport.start { event in
            switch event {
            case let .packets(packets):
                for packet in packets {
                    switch packet.indicator {
                    case .event:
                        if let event = try? HCIEvent.decode(packet.bytes) { inbox.append(.event(event)) } else { inbox.append(.undecodable(Array(packet.bytes))) }
                    case .acl:
                        if let acl = try? ACLDataPacket.decode(packet.bytes) { inbox.append(.acl(acl)) } else { inbox.append(.undecodable(Array(packet.bytes))) }
                    default:
                        inbox.append(.undecodable(Array(packet.bytes)))
                    }
                }
            case let .closed(reason):
                inbox.append(.closed(reason))
            }
        }
    }

    var link: VirtualLink { controller.link }

    /// Simulated time on the link.
    var now: Duration { link.now }

    // MARK: Waiting

    /// The first item not yet taken that matches, once it has arrived: with a manual clock
    /// within `timeout` of simulated time, else of real time.
    func next(_ description: String, timeout: Duration = .seconds(20),
              where matches: @escaping @Sendable (Received) -> Bool = { _ in true }) async throws -> TestInbox<Received>.Stamped {
        guard let clock = manualClock else { return try await inbox.next(description, timeout: timeout, where: matches) }
        let limit = clock.now + timeout
        while true {
            link.waitUntilDelivered()
            if let found = inbox.take(where: matches) { return found }
            guard let next = clock.nextDeadline, next <= limit else {
                throw TestTimeout(description: "no \(description) within \(timeout) of simulated time")
            }
            clock.advance(to: next)
        }
    }

    /// Checks that nothing matching arrives for `duration` (and none is waiting untaken): a
    /// bounded wait that asserts an absence, never one that synchronises. With a manual clock
    /// the link runs for exactly `duration` of simulated time.
    func expectNothing(_ description: String, for duration: Duration, where matches: @escaping @Sendable (Received) -> Bool) async throws -> Bool {
        if let clock = manualClock {
            let end = clock.now + duration
            while true {
                link.waitUntilDelivered()
                if inbox.contains(where: matches) { return false }
                guard let next = clock.nextDeadline, next <= end else { break }
                clock.advance(to: next)
            }
            clock.advance(to: end)
            link.waitUntilDelivered()
            return !inbox.contains(where: matches)
        }
        do {
            _ = try await inbox.next(description, timeout: duration, where: matches)
            return false
        } catch is TestTimeout {
            return true
        }
    }

    /// Lets `duration` of simulated time pass on a manual link (what arrives meanwhile stays
    /// in the inbox).
    func run(for duration: Duration) {
        guard let clock = manualClock else { return }
        clock.advance(by: duration)
        link.waitUntilDelivered()
    }

    // MARK: Commands

    func sendRaw(_ bytes: [UInt8]) throws {
        try transport.send(H4Packet(.command, bytes))
    }

    /// Sends a command and returns its Command Complete.
    @discardableResult
    func complete<Command: HCICommand>(_ command: Command, timeout: Duration = .seconds(20)) async throws -> CommandCompleteEvent {
        try sendRaw(command.encode())
        return try await commandComplete(Command.opcode, timeout: timeout)
    }

    func commandComplete(_ opcode: HCIOpcode, timeout: Duration = .seconds(20)) async throws -> CommandCompleteEvent {
        let received = try await next("Command Complete for \(opcode)", timeout: timeout) { item in
            if case let .event(.commandComplete(complete)) = item { return complete.opcode == opcode }
            return false
        }
        guard case let .event(.commandComplete(complete)) = received.item else { throw TestTimeout(description: "unreachable") }
        return complete
    }

    /// Sends a command and expects success with these return parameters.
    func run<Command: HCICommand>(_ command: Command) async throws -> Command.ReturnParameters {
        let complete = try await complete(command)
        #expect(complete.status == .success, "\(Command.name) failed: \(complete.status)")
        #expect(complete.numberOfHCICommandPackets == 1)
        return try Command.ReturnParameters.decode(returnParameters: Array(complete.returnParameters.dropFirst()), context: Command.name)
    }

    /// Sends a command answered by Command Status and returns the status.
    @discardableResult
    func status<Command: HCICommand>(_ command: Command, timeout: Duration = .seconds(20)) async throws -> HCIStatus {
        try sendRaw(command.encode())
        return try await commandStatus(Command.opcode, timeout: timeout).status
    }

    func commandStatus(_ opcode: HCIOpcode, timeout: Duration = .seconds(20)) async throws -> CommandStatusEvent {
        let received = try await next("Command Status for \(opcode)", timeout: timeout) { item in
            if case let .event(.commandStatus(status)) = item { return status.opcode == opcode }
            return false
        }
        guard case let .event(.commandStatus(status)) = received.item else { throw TestTimeout(description: "unreachable") }
        return status
    }

    // MARK: Events

    /// The next event that matches, with its arrival time.
    @discardableResult
    func event(_ description: String, timeout: Duration = .seconds(20), where matches: @escaping @Sendable (HCIEvent) -> Bool) async throws -> (HCIEvent, Duration) {
        let received = try await next(description, timeout: timeout) { item in item.event.map(matches) ?? false }
        guard let event = received.item.event else { throw TestTimeout(description: "unreachable") }
        return (event, received.time)
    }

    @discardableResult
    func leEvent(_ description: String, timeout: Duration = .seconds(20), where matches: @escaping @Sendable (HCILEMetaEvent) -> Bool) async throws -> (HCILEMetaEvent, Duration) {
        let received = try await next(description, timeout: timeout) { item in item.le.map(matches) ?? false }
        guard let event = received.item.le else { throw TestTimeout(description: "unreachable") }
        return (event, received.time)
    }

    func disconnection(handle: UInt16, timeout: Duration = .seconds(20)) async throws -> (DisconnectionCompleteEvent, Duration) {
        let (event, time) = try await event("Disconnection Complete for 0x\(String(handle, radix: 16))", timeout: timeout) { event in
            if case let .disconnectionComplete(complete) = event { return complete.connectionHandle == handle }
            return false
        }
        guard case let .disconnectionComplete(complete) = event else { throw TestTimeout(description: "unreachable") }
        return (complete, time)
    }

    /// The next ACL packet, with its arrival time.
    func acl(timeout: Duration = .seconds(20)) async throws -> (ACLDataPacket, Duration) {
        let received = try await next("ACL data", timeout: timeout) { $0.acl != nil }
        guard let packet = received.item.acl else { throw TestTimeout(description: "unreachable") }
        return (packet, received.time)
    }

    func completedPackets(handle: UInt16, timeout: Duration = .seconds(20)) async throws -> (Int, Duration) {
        let (event, time) = try await event("Number Of Completed Packets", timeout: timeout) { event in
            if case .numberOfCompletedPackets = event { return true }
            return false
        }
        guard case let .numberOfCompletedPackets(completed) = event else { throw TestTimeout(description: "unreachable") }
        return (completed.entries.filter { $0.connectionHandle == handle }.map { Int($0.completedPackets) }.reduce(0, +), time)
    }

    // MARK: Procedures

    /// Reset and the event masks a host uses: everything LE, enhanced connection complete.
    func initialize(leEvents: LEEventMask = HCITestHost.allLEEvents) async throws {
        try await complete(ResetCommand())
        try await complete(SetEventMaskCommand(mask: .leHost))
        try await complete(LESetEventMaskCommand(mask: leEvents))
    }

    static let allLEEvents: LEEventMask = [
        .connectionComplete, .advertisingReport, .connectionUpdateComplete, .readRemoteFeaturesComplete,
        .longTermKeyRequest, .remoteConnectionParameterRequest, .dataLengthChange, .enhancedConnectionComplete,
        .phyUpdateComplete, .extendedAdvertisingReport, .scanTimeout, .advertisingSetTerminated, .channelSelectionAlgorithm,
    ]

    /// Starts legacy advertising (ADV_IND by default) every `interval` × 0.625 ms.
    func advertise(interval: UInt16 = 0x0020, type: AdvertisingType = .advInd, data: [UInt8] = [], scanResponse: [UInt8] = []) async throws {
        #expect(try await complete(LESetAdvertisingParametersCommand(intervalMin: interval, intervalMax: interval, advertisingType: type)).status == .success)
        #expect(try await complete(LESetAdvertisingDataCommand(data: data)).status == .success)
        #expect(try await complete(LESetScanResponseDataCommand(data: scanResponse)).status == .success)
        #expect(try await complete(LESetAdvertisingEnableCommand(enable: true)).status == .success)
    }

    /// The public address as a peer sees it.
    var publicAddress: DeviceAddress { DeviceAddress(controller.address, type: .public) }

    /// LE Create Connection to `peer`; returns once the Command Status is in.
    func createConnection(to peer: DeviceAddress, interval: UInt16 = 12, latency: UInt16 = 0, timeout: UInt16 = 100) async throws -> HCIStatus {
        try await status(LECreateConnectionCommand(
            scanInterval: 0x0060, scanWindow: 0x0060, peerAddressType: peer.type, peerAddress: peer.address,
            connectionIntervalMin: interval, connectionIntervalMax: interval, maxLatency: latency, supervisionTimeout: timeout))
    }

    /// Waits for an LE (Enhanced) Connection Complete and returns it as the enhanced event.
    func connectionComplete(timeout: Duration = .seconds(20)) async throws -> (LEEnhancedConnectionCompleteEvent, Duration) {
        let (event, time) = try await leEvent("LE Connection Complete", timeout: timeout) { event in
            switch event {
            case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2: return true
            default: return false
            }
        }
        switch event {
        case let .enhancedConnectionComplete(complete): return (complete, time)
        case let .connectionComplete(c):
            return (LEEnhancedConnectionCompleteEvent(status: c.status, connectionHandle: c.connectionHandle, role: c.role, peerAddressType: c.peerAddressType,
                                                      peerAddress: c.peerAddress, connectionInterval: c.connectionInterval,
                                                      peripheralLatency: c.peripheralLatency, supervisionTimeout: c.supervisionTimeout), time)
        case let .enhancedConnectionCompleteV2(c):
            return (LEEnhancedConnectionCompleteEvent(status: c.status, connectionHandle: c.connectionHandle, role: c.role, peerAddressType: c.peerAddressType,
                                                      peerAddress: c.peerAddress, connectionInterval: c.connectionInterval,
                                                      peripheralLatency: c.peripheralLatency, supervisionTimeout: c.supervisionTimeout), time)
        default:
            throw TestTimeout(description: "unreachable")
        }
    }

    func sendACL(handle: UInt16, _ data: [UInt8], boundary: ACLPacketBoundary = .firstNonFlushable) throws {
        try transport.send(H4Packet(.acl, ACLDataPacket(connectionHandle: handle, packetBoundary: boundary, data: data).encode()))
    }

    func close() { transport.close() }
}

/// Two initialized hosts on one link, `peripheral` advertising, then connected.
/// Not a ``TwoDevices``: these are raw HCI hosts for testing the virtual controller itself, with no `LEHost` above them.
struct ConnectedPair {
    let link: VirtualLink
    let central: HCITestHost
    let peripheral: HCITestHost
    let centralHandle: UInt16
    let peripheralHandle: UInt16
    let connectedAt: Duration

    static func make(link: VirtualLink = .manual(), interval: UInt16 = 12, timeout: UInt16 = 100,
                     centralConfiguration: VirtualController.Configuration = .init(),
                     peripheralConfiguration: VirtualController.Configuration = .init(),
                     distance: Double = 2) async throws -> ConnectedPair {
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central, configuration: centralConfiguration))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, configuration: peripheralConfiguration,
                                                        position: VirtualPosition(x: distance, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        try await peripheral.advertise()
        #expect(try await central.createConnection(to: peripheral.publicAddress, interval: interval, timeout: timeout) == .success)
        let (centralComplete, time) = try await central.connectionComplete()
        let (peripheralComplete, _) = try await peripheral.connectionComplete()
        #expect(centralComplete.status == .success)
        #expect(peripheralComplete.status == .success)
        // Wait until the link is established (a connection event got through), as the
        // feature exchange shows; before that, a lost link fails with 0x3E, not 0x08.
        #expect(try await central.status(LEReadRemoteFeaturesCommand(connectionHandle: centralComplete.connectionHandle)) == .success)
        try await central.leEvent("LE Read Remote Features Complete") { if case .readRemoteFeaturesComplete = $0 { return true }; return false }
        return ConnectedPair(link: link, central: central, peripheral: peripheral, centralHandle: centralComplete.connectionHandle,
                             peripheralHandle: peripheralComplete.connectionHandle, connectedAt: time)
    }
}

extension VirtualLink {
    /// A link on a new manual clock: simulated time moves only as tests wait.
    static func manual(seed: UInt64 = 1) -> VirtualLink {
        VirtualLink(configuration: .init(seed: seed, manualClock: ManualClock()))
    }
}

extension Duration {
    var milliseconds: Double { self / .milliseconds(1) }
}
