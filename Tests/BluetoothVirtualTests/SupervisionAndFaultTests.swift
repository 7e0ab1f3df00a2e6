import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("Virtual link: supervision timeout and fault injection", .timeLimit(.minutes(1)))
struct SupervisionAndFaultTests {
    @Test func movingOutOfRangeEndsTheConnectionAfterTheSupervisionTimeout() async throws {
        // 200 ms supervision timeout.
        let pair = try await ConnectedPair.make(interval: 8, timeout: 20)
        let peripheralController = pair.peripheral.controller
        let movedAt = pair.central.now
        peripheralController.move(to: .init(x: 2000, y: 0))
        let (central, centralTime) = try await pair.central.disconnection(handle: pair.centralHandle)
        let (peripheral, _) = try await pair.peripheral.disconnection(handle: pair.peripheralHandle)
        #expect(central.reason == .connectionTimeout)
        #expect(peripheral.reason == .connectionTimeout)
        let elapsed = (centralTime - movedAt).milliseconds
        // The last event heard was at most one 10 ms interval before the move.
        #expect(elapsed >= 190 && elapsed <= 210, "\(elapsed) ms: at the timeout")
    }

    @Test func comingBackInTimeKeepsTheConnection() async throws {
        // A 3 s supervision timeout: out of range for 100 ms must not end the link.
        let pair = try await ConnectedPair.make(interval: 8, timeout: 300)
        pair.peripheral.controller.move(to: .init(x: 2000, y: 0))
        #expect(try await pair.central.expectNothing("disconnection", for: .milliseconds(100)) { $0.event.map { if case .disconnectionComplete = $0 { return true }; return false } ?? false })
        pair.peripheral.controller.move(to: .init(x: 2, y: 0))
        #expect(try await pair.central.expectNothing("disconnection", for: .milliseconds(400)) { $0.event.map { if case .disconnectionComplete = $0 { return true }; return false } ?? false })
        try pair.central.sendACL(handle: pair.centralHandle, DataTests.pdu(3))
        #expect(try await pair.peripheral.acl().0.data == DataTests.pdu(3))
    }

    @Test func timeScaleSpeedsUpTheSupervisionTimeout() async throws {
        // Real time at 10×: 2 s of simulated supervision timeout pass in about 0.2 s.
        let link = VirtualLink(configuration: .init(timeScale: 10))
        let pair = try await ConnectedPair.make(link: link, interval: 40, timeout: 200)
        let start = (real: ContinuousClock.now, simulated: link.now)
        link.setPathLoss(between: pair.central.controller, and: pair.peripheral.controller, to: 200)
        let (event, time) = try await pair.central.disconnection(handle: pair.centralHandle, timeout: .seconds(30))
        #expect(event.reason == .connectionTimeout)
        let simulated = (time - start.simulated).milliseconds
        let real = (ContinuousClock.now - start.real).milliseconds
        #expect(simulated >= 1950, "\(simulated) ms simulated: after the supervision timeout")
        // Scaling itself is exact (see clockScalesAndRebasesWithoutJumps); here only that the
        // real link does not fire before a tenth of it.
        #expect(real >= 190, "\(real) ms real for \(simulated) ms simulated")
        #expect(link.timeScale == 10)
    }

    @Test func droppingALinkNow() async throws {
        let pair = try await ConnectedPair.make()
        #expect(pair.link.dropConnection(between: pair.central.controller, and: pair.peripheral.controller, reason: .remoteDeviceTerminatedLowResources))
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .remoteDeviceTerminatedLowResources)
        #expect(try await pair.peripheral.disconnection(handle: pair.peripheralHandle).0.reason == .remoteDeviceTerminatedLowResources)
        #expect(!pair.link.dropConnection(between: pair.central.controller, and: pair.peripheral.controller))
    }

    @Test func lostPacketsArriveLateButInOrder() async throws {
        let pair = try await ConnectedPair.make(interval: 12)
        #expect(pair.central.controller.injectACLFault(.lose(attempts: 3), count: 1, connectionHandle: pair.centralHandle, direction: .outgoing))
        let start = pair.central.now
        try pair.central.sendACL(handle: pair.centralHandle, DataTests.pdu(1, seed: 1))
        try pair.central.sendACL(handle: pair.centralHandle, DataTests.pdu(1, seed: 2))
        let (first, firstTime) = try await pair.peripheral.acl()
        let (second, _) = try await pair.peripheral.acl()
        #expect(first.data == DataTests.pdu(1, seed: 1))
        #expect(second.data == DataTests.pdu(1, seed: 2))
        // Three failed attempts: the fourth event, three 15 ms intervals after the first.
        #expect((firstTime - start).milliseconds >= 45 && (firstTime - start).milliseconds <= 60, "\((firstTime - start).milliseconds) ms")
        var credits = 0
        while credits < 2 { credits += try await pair.central.completedPackets(handle: pair.centralHandle).0 }
        #expect(credits == 2)
    }

    @Test func delayedPacketsWait() async throws {
        let pair = try await ConnectedPair.make(interval: 8)
        // Incoming to the central: the peripheral's next packet.
        #expect(pair.central.controller.injectACLFault(.delay(.milliseconds(150)), connectionHandle: pair.centralHandle, direction: .incoming))
        let start = pair.central.now
        try pair.peripheral.sendACL(handle: pair.peripheralHandle, DataTests.pdu(2))
        let (packet, time) = try await pair.central.acl()
        #expect(packet.data == DataTests.pdu(2))
        #expect((time - start).milliseconds >= 150 && (time - start).milliseconds <= 160, "\((time - start).milliseconds) ms")
    }

    @Test func droppedPacketsNeverArriveButCreditsReturn() async throws {
        let pair = try await ConnectedPair.make()
        #expect(pair.peripheral.controller.injectACLFault(.drop, count: 2, connectionHandle: pair.peripheralHandle, direction: .outgoing))
        for seed in 1...3 { try pair.peripheral.sendACL(handle: pair.peripheralHandle, DataTests.pdu(1, seed: UInt8(seed))) }
        #expect(try await pair.central.acl().0.data == DataTests.pdu(1, seed: 3))
        var credits = 0
        while credits < 3 { credits += try await pair.peripheral.completedPackets(handle: pair.peripheralHandle).0 }
        #expect(credits == 3)
        #expect(try await pair.central.expectNothing("dropped data", for: .milliseconds(100)) { $0.acl != nil })
    }

    @Test func ignoredConnectRequestsLeaveTheInitiatorWaitingUntilCancelled() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        peripheral.controller.setConnectionAcceptance(.ignore)
        #expect(peripheral.controller.connectionAcceptance == .ignore)
        try await peripheral.advertise()
        #expect(try await central.createConnection(to: peripheral.publicAddress) == .success)
        #expect(try await central.expectNothing("connection", for: .milliseconds(300)) { $0.le != nil })
        #expect(peripheral.controller.isAdvertising)
        #expect(try await central.complete(LECreateConnectionCancelCommand()).status == .success)
        #expect(try await central.connectionComplete().0.status == .unknownConnectionIdentifier)
        // Accepting again: the next attempt connects.
        peripheral.controller.setConnectionAcceptance(.accept)
        #expect(try await central.createConnection(to: peripheral.publicAddress) == .success)
        #expect(try await central.connectionComplete().0.status == .success)
    }

    @Test func connectionThatFailsToBeEstablished() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        peripheral.controller.setConnectionAcceptance(.failToEstablish)
        try await peripheral.advertise()
        #expect(try await central.createConnection(to: peripheral.publicAddress, interval: 8) == .success)
        let (complete, _) = try await central.connectionComplete()
        #expect(complete.status == .connectionFailedToBeEstablished)
        #expect(try await peripheral.expectNothing("connection on the peripheral", for: .milliseconds(100)) { $0.le != nil })
    }

    @Test func hardwareErrorDropsConnections() async throws {
        let pair = try await ConnectedPair.make(interval: 8, timeout: 20)
        pair.central.controller.simulateHardwareError(code: 0x42)
        let (event, _) = try await pair.central.event("Hardware Error") { if case .hardwareError = $0 { return true }; return false }
        #expect(event == .hardwareError(HardwareErrorEvent(hardwareCode: 0x42)))
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .hardwareFailure)
        // The peer finds out by supervision timeout.
        #expect(try await pair.peripheral.disconnection(handle: pair.peripheralHandle).0.reason == .connectionTimeout)
        #expect(pair.central.controller.connectionHandles.isEmpty)
    }

    @Test func hciResetDropsConnectionsSilently() async throws {
        let pair = try await ConnectedPair.make(interval: 8, timeout: 20)
        #expect(try await pair.central.complete(ResetCommand()).status == .success)
        #expect(pair.central.controller.connectionHandles.isEmpty)
        #expect(try await pair.peripheral.disconnection(handle: pair.peripheralHandle).0.reason == .connectionTimeout)
        #expect(try await pair.central.expectNothing("disconnection on the reset side", for: .milliseconds(50)) {
            $0.event.map { if case .disconnectionComplete = $0 { return true }; return false } ?? false
        })
    }

    @Test func removingAControllerClosesItsTransport() async throws {
        let pair = try await ConnectedPair.make(interval: 8, timeout: 20)
        pair.link.removeController(pair.peripheral.controller)
        // The link's delivery includes the removed controller's close, before time moves.
        pair.link.waitUntilDelivered()
        #expect(pair.peripheral.inbox.contains { if case .closed = $0 { return true }; return false })
        let closed = try await pair.peripheral.next("closed") { if case .closed = $0 { return true }; return false }
        if case let .closed(reason) = closed.item { #expect(reason != nil) }
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .connectionTimeout)
        #expect(pair.link.controllers == [pair.central.controller])
    }
}
