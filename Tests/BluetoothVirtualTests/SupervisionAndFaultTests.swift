import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("Virtual link: supervision timeout and fault injection")
struct SupervisionAndFaultTests {
    @Test func movingOutOfRangeEndsTheConnectionAfterTheSupervisionTimeout() async throws {
        // 200 ms supervision timeout.
        let pair = try await ConnectedPair.make(interval: 8, timeout: 20)
        let peripheralController = pair.peripheral.controller
        let movedAt = ContinuousClock.now
        peripheralController.move(to: .init(x: 2000, y: 0))
        let (central, centralTime) = try await pair.central.disconnection(handle: pair.centralHandle)
        let (peripheral, _) = try await pair.peripheral.disconnection(handle: pair.peripheralHandle)
        #expect(central.reason == .connectionTimeout)
        #expect(peripheral.reason == .connectionTimeout)
        let elapsed = (centralTime - movedAt).milliseconds
        #expect(elapsed >= 190 && elapsed < 1500, "\(elapsed) ms: after the timeout, not before (the upper bound allows a loaded machine)")
    }

    @Test func comingBackInTimeKeepsTheConnection() async throws {
        // A 3 s supervision timeout: out of range for 100 ms must not end the link, even when a
        // loaded machine stretches those 100 ms.
        let pair = try await ConnectedPair.make(interval: 8, timeout: 300)
        pair.peripheral.controller.move(to: .init(x: 2000, y: 0))
        #expect(try await pair.central.inbox.expectNothing("disconnection", for: .milliseconds(100)) { $0.event.map { if case .disconnectionComplete = $0 { return true }; return false } ?? false })
        pair.peripheral.controller.move(to: .init(x: 2, y: 0))
        #expect(try await pair.central.inbox.expectNothing("disconnection", for: .milliseconds(400)) { $0.event.map { if case .disconnectionComplete = $0 { return true }; return false } ?? false })
        try pair.central.sendACL(handle: pair.centralHandle, DataTests.pdu(3))
        #expect(try await pair.peripheral.acl().0.data == DataTests.pdu(3))
    }

    @Test func timeScaleSpeedsUpTheSupervisionTimeout() async throws {
        // 2 s of simulated supervision timeout at 10× pass in about 0.2 s.
        let link = VirtualLink(configuration: .init(timeScale: 10))
        let pair = try await ConnectedPair.make(link: link, interval: 40, timeout: 200)
        let start = ContinuousClock.now
        link.setPathLoss(between: pair.central.controller, and: pair.peripheral.controller, to: 200)
        let (event, time) = try await pair.central.disconnection(handle: pair.centralHandle)
        #expect(event.reason == .connectionTimeout)
        let elapsed = (time - start).milliseconds
        #expect(elapsed >= 190 && elapsed < 1500, "\(elapsed) ms real for 2 s simulated (10× faster than real time)")
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
        let start = ContinuousClock.now
        try pair.central.sendACL(handle: pair.centralHandle, DataTests.pdu(1, seed: 1))
        try pair.central.sendACL(handle: pair.centralHandle, DataTests.pdu(1, seed: 2))
        let (first, firstTime) = try await pair.peripheral.acl()
        let (second, _) = try await pair.peripheral.acl()
        #expect(first.data == DataTests.pdu(1, seed: 1))
        #expect(second.data == DataTests.pdu(1, seed: 2))
        // Three failed attempts: the fourth event at the earliest, 45 ms later.
        #expect((firstTime - start).milliseconds >= 40)
        var credits = 0
        while credits < 2 { credits += try await pair.central.completedPackets(handle: pair.centralHandle).0 }
        #expect(credits == 2)
    }

    @Test func delayedPacketsWait() async throws {
        let pair = try await ConnectedPair.make(interval: 8)
        // Incoming to the central: the peripheral's next packet.
        #expect(pair.central.controller.injectACLFault(.delay(.milliseconds(150)), connectionHandle: pair.centralHandle, direction: .incoming))
        let start = ContinuousClock.now
        try pair.peripheral.sendACL(handle: pair.peripheralHandle, DataTests.pdu(2))
        let (packet, time) = try await pair.central.acl()
        #expect(packet.data == DataTests.pdu(2))
        #expect((time - start).milliseconds >= 150)
    }

    @Test func droppedPacketsNeverArriveButCreditsReturn() async throws {
        let pair = try await ConnectedPair.make()
        #expect(pair.peripheral.controller.injectACLFault(.drop, count: 2, connectionHandle: pair.peripheralHandle, direction: .outgoing))
        for seed in 1...3 { try pair.peripheral.sendACL(handle: pair.peripheralHandle, DataTests.pdu(1, seed: UInt8(seed))) }
        #expect(try await pair.central.acl().0.data == DataTests.pdu(1, seed: 3))
        var credits = 0
        while credits < 3 { credits += try await pair.peripheral.completedPackets(handle: pair.peripheralHandle).0 }
        #expect(credits == 3)
        #expect(try await pair.central.inbox.expectNothing("dropped data", for: .milliseconds(100)) { $0.acl != nil })
    }

    @Test func ignoredConnectRequestsLeaveTheInitiatorWaitingUntilCancelled() async throws {
        let link = VirtualLink()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        peripheral.controller.setConnectionAcceptance(.ignore)
        #expect(peripheral.controller.connectionAcceptance == .ignore)
        try await peripheral.advertise()
        #expect(try await central.createConnection(to: peripheral.publicAddress) == .success)
        #expect(try await central.inbox.expectNothing("connection", for: .milliseconds(300)) { $0.le != nil })
        #expect(peripheral.controller.isAdvertising)
        #expect(try await central.complete(LECreateConnectionCancelCommand()).status == .success)
        #expect(try await central.connectionComplete().0.status == .unknownConnectionIdentifier)
        // Accepting again: the next attempt connects.
        peripheral.controller.setConnectionAcceptance(.accept)
        #expect(try await central.createConnection(to: peripheral.publicAddress) == .success)
        #expect(try await central.connectionComplete().0.status == .success)
    }

    @Test func connectionThatFailsToBeEstablished() async throws {
        let link = VirtualLink()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        peripheral.controller.setConnectionAcceptance(.failToEstablish)
        try await peripheral.advertise()
        #expect(try await central.createConnection(to: peripheral.publicAddress, interval: 8) == .success)
        let (complete, _) = try await central.connectionComplete()
        #expect(complete.status == .connectionFailedToBeEstablished)
        #expect(try await peripheral.inbox.expectNothing("connection on the peripheral", for: .milliseconds(100)) { $0.le != nil })
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
        #expect(try await pair.central.inbox.expectNothing("disconnection on the reset side", for: .milliseconds(50)) {
            $0.event.map { if case .disconnectionComplete = $0 { return true }; return false } ?? false
        })
    }

    @Test func removingAControllerClosesItsTransport() async throws {
        let pair = try await ConnectedPair.make(interval: 8, timeout: 20)
        pair.link.removeController(pair.peripheral.controller)
        let closed = try await pair.peripheral.inbox.next("closed") { if case .closed = $0 { return true }; return false }
        if case let .closed(reason) = closed.item { #expect(reason != nil) }
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .connectionTimeout)
        #expect(pair.link.controllers == [pair.central.controller])
    }
}
