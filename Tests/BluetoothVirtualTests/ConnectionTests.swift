import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("Virtual link: connections", .timeLimit(.minutes(1)))
struct ConnectionTests {
    @Test func connectionCompleteOnBothSides() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        // 100 ms advertising interval: the connection waits for the next advertising event.
        try await peripheral.advertise(interval: 160)
        let start = central.now
        #expect(try await central.createConnection(to: peripheral.publicAddress, interval: 24, latency: 2, timeout: 300) == .success)
        let (centralComplete, connectedAt) = try await central.connectionComplete()
        let (peripheralComplete, _) = try await peripheral.connectionComplete()
        #expect(centralComplete.status == .success)
        #expect(centralComplete.role == .central)
        #expect(centralComplete.peerAddress == TestAddresses.peripheral)
        #expect(centralComplete.peerAddressType == .public)
        #expect(centralComplete.connectionInterval == 24)
        #expect(centralComplete.peripheralLatency == 2)
        #expect(centralComplete.supervisionTimeout == 300)
        #expect(peripheralComplete.role == .peripheral)
        #expect(peripheralComplete.peerAddress == TestAddresses.central)
        #expect(peripheralComplete.connectionInterval == 24)
        // At most one advertising interval plus advDelay (110 ms) and the transmit window delay.
        #expect((connectedAt - start).milliseconds <= 112, "waits for the next advertising event, not longer: \((connectedAt - start).milliseconds) ms")
        // Legacy advertising stops once connected (Core 6.0, Vol 4, Part E, 7.8.9).
        #expect(!peripheral.controller.isAdvertising)
        #expect(!central.controller.isInitiating)
        #expect(central.controller.connectionHandles == [centralComplete.connectionHandle])
        #expect(central.controller.peer(ofConnection: centralComplete.connectionHandle) == peripheral.controller)
        // The channel selection algorithm follows on both sides.
        try await central.leEvent("LE Channel Selection Algorithm") { if case .channelSelectionAlgorithm = $0 { return true }; return false }
        try await peripheral.leEvent("LE Channel Selection Algorithm") { if case .channelSelectionAlgorithm = $0 { return true }; return false }
    }

    @Test func legacyConnectionCompleteWhenTheHostDidNotUnmaskTheEnhancedOne() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize(leEvents: [.connectionComplete])
        try await peripheral.initialize(leEvents: [.connectionComplete])
        try await peripheral.advertise()
        #expect(try await central.createConnection(to: peripheral.publicAddress) == .success)
        let (event, _) = try await central.leEvent("connection complete") { _ in true }
        guard case let .connectionComplete(complete) = event else {
            Issue.record("expected LE Connection Complete, got \(event)")
            return
        }
        #expect(complete.status == .success)
        #expect(try await central.expectNothing("another LE event", for: .milliseconds(100)) { $0.le != nil })
    }

    @Test func extendedCreateConnection() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        try await peripheral.advertise()
        let phy = LEExtendedCreateConnectionCommand.PHYParameters(scanInterval: 0x60, scanWindow: 0x60, connectionIntervalMin: 8, connectionIntervalMax: 16,
                                                                  maxLatency: 0, supervisionTimeout: 200)
        #expect(try await central.status(LEExtendedCreateConnectionCommand(peerAddressType: .public, peerAddress: TestAddresses.peripheral, le1M: phy)) == .success)
        let (complete, _) = try await central.connectionComplete()
        #expect(complete.status == .success)
        #expect(complete.connectionInterval == 8)
        // LE 2M alone cannot be scanned.
        #expect(try await central.status(LEExtendedCreateConnectionCommand(peerAddressType: .public, peerAddress: TestAddresses.third, le1M: nil, le2M: phy)) == .invalidCommandParameters)
    }

    @Test func createConnectionRules() async throws {
        let pair = try await ConnectedPair.make()
        // Connected already.
        #expect(try await pair.central.createConnection(to: pair.peripheral.publicAddress) == .connectionAlreadyExists)
        // One attempt at a time.
        #expect(try await pair.central.createConnection(to: DeviceAddress(TestAddresses.third, type: .public)) == .success)
        #expect(try await pair.central.createConnection(to: DeviceAddress(TestAddresses.third, type: .random)) == .commandDisallowed)
    }

    @Test func createConnectionCancel() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        try await central.initialize()
        #expect(try await central.createConnection(to: DeviceAddress(TestAddresses.peripheral, type: .random)) == .success)
        let complete = try await central.complete(LECreateConnectionCancelCommand())
        #expect(complete.status == .success)
        let (event, _) = try await central.connectionComplete()
        #expect(event.status == .unknownConnectionIdentifier)
        #expect(event.role == .central)
        #expect(!central.controller.isInitiating)
        // The Command Complete comes before the connection complete event.
        let order = central.inbox.all.compactMap { item -> String? in
            switch item.item {
            case .event(.commandComplete(let cc)) where cc.opcode == LECreateConnectionCancelCommand.opcode: return "cancel"
            case .event(.le(.enhancedConnectionComplete)): return "complete"
            default: return nil
            }
        }
        #expect(order == ["cancel", "complete"])
        #expect(try await central.complete(LECreateConnectionCancelCommand()).status == .commandDisallowed)
    }

    @Test func disconnectReasons() async throws {
        let pair = try await ConnectedPair.make()
        #expect(try await pair.central.status(DisconnectCommand(connectionHandle: pair.centralHandle, reason: .connectionTimeout)) == .invalidCommandParameters)
        #expect(try await pair.central.status(DisconnectCommand(connectionHandle: pair.centralHandle, reason: .remoteDeviceTerminatedPowerOff)) == .success)
        let (local, _) = try await pair.central.disconnection(handle: pair.centralHandle)
        let (remote, _) = try await pair.peripheral.disconnection(handle: pair.peripheralHandle)
        #expect(local.status == .success)
        #expect(local.reason == .connectionTerminatedByLocalHost)
        #expect(remote.reason == .remoteDeviceTerminatedPowerOff)
        #expect(pair.central.controller.connectionHandles.isEmpty)
        #expect(pair.peripheral.controller.connectionHandles.isEmpty)
        #expect(try await pair.central.status(DisconnectCommand(connectionHandle: pair.centralHandle)) == .unknownConnectionIdentifier)
    }

    @Test func peripheralDisconnects() async throws {
        let pair = try await ConnectedPair.make()
        #expect(try await pair.peripheral.status(DisconnectCommand(connectionHandle: pair.peripheralHandle)) == .success)
        #expect(try await pair.peripheral.disconnection(handle: pair.peripheralHandle).0.reason == .connectionTerminatedByLocalHost)
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .remoteUserTerminatedConnection)
    }

    @Test func centralConnectionUpdateCompletesAtTheInstantOnBothSides() async throws {
        let pair = try await ConnectedPair.make(interval: 8)
        let start = pair.central.now
        #expect(try await pair.central.status(LEConnectionUpdateCommand(connectionHandle: pair.centralHandle, connectionIntervalMin: 40, connectionIntervalMax: 48,
                                                                        maxLatency: 1, supervisionTimeout: 400)) == .success)
        #expect(try await pair.central.status(LEConnectionUpdateCommand(connectionHandle: pair.centralHandle, connectionIntervalMin: 40, connectionIntervalMax: 48,
                                                                        maxLatency: 1, supervisionTimeout: 400)) == .commandDisallowed, "one update at a time")
        var times: [Duration] = []
        for (host, handle) in [(pair.central, pair.centralHandle), (pair.peripheral, pair.peripheralHandle)] {
            let (event, time) = try await host.leEvent("LE Connection Update Complete") { if case .connectionUpdateComplete = $0 { return true }; return false }
            guard case let .connectionUpdateComplete(update) = event else { continue }
            #expect(update.status == .success)
            #expect(update.connectionHandle == handle)
            #expect(update.connectionInterval == 40)
            #expect(update.peripheralLatency == 1)
            #expect(update.supervisionTimeout == 400)
            // The instant is 6 connection events of 10 ms after the next one.
            #expect((time - start).milliseconds > 60 && (time - start).milliseconds <= 70, "after \((time - start).milliseconds) ms")
            times.append(time)
        }
        #expect(times.count == 2 && times.first == times.last, "both sides at the same instant: \(times)")
        #expect(pair.central.controller.connectionParameters(ofConnection: pair.centralHandle)?.interval == 40)
    }

    @Test func peripheralRequestsParametersAndTheCentralHostDecides() async throws {
        let pair = try await ConnectedPair.make()
        #expect(try await pair.peripheral.status(LEConnectionUpdateCommand(connectionHandle: pair.peripheralHandle, connectionIntervalMin: 24, connectionIntervalMax: 40,
                                                                           maxLatency: 0, supervisionTimeout: 200)) == .success)
        let (event, _) = try await pair.central.leEvent("LE Remote Connection Parameter Request") {
            if case .remoteConnectionParameterRequest = $0 { return true }; return false
        }
        guard case let .remoteConnectionParameterRequest(request) = event else { return }
        #expect(request.connectionHandle == pair.centralHandle)
        #expect(request.intervalMin == 24)
        #expect(request.intervalMax == 40)
        let reply = try await pair.central.run(LERemoteConnectionParameterRequestReplyCommand(
            connectionHandle: pair.centralHandle, intervalMin: 30, intervalMax: 30, maxLatency: 0, timeout: 200))
        #expect(reply.connectionHandle == pair.centralHandle)
        for host in [pair.central, pair.peripheral] {
            let (update, _) = try await host.leEvent("LE Connection Update Complete") { if case .connectionUpdateComplete = $0 { return true }; return false }
            if case let .connectionUpdateComplete(complete) = update { #expect(complete.connectionInterval == 30) }
        }
        // A reply with no request pending is refused.
        #expect(try await pair.central.complete(LERemoteConnectionParameterRequestReplyCommand(
            connectionHandle: pair.centralHandle, intervalMin: 30, intervalMax: 30, maxLatency: 0, timeout: 200)).status == .commandDisallowed)
    }

    @Test func centralHostRefusesTheParameterRequest() async throws {
        let pair = try await ConnectedPair.make()
        #expect(try await pair.peripheral.status(LEConnectionUpdateCommand(connectionHandle: pair.peripheralHandle, connectionIntervalMin: 24, connectionIntervalMax: 40,
                                                                           maxLatency: 0, supervisionTimeout: 200)) == .success)
        try await pair.central.leEvent("LE Remote Connection Parameter Request") { if case .remoteConnectionParameterRequest = $0 { return true }; return false }
        #expect(try await pair.central.run(LERemoteConnectionParameterRequestNegativeReplyCommand(connectionHandle: pair.centralHandle)).connectionHandle == pair.centralHandle)
        let (event, _) = try await pair.peripheral.leEvent("LE Connection Update Complete") { if case .connectionUpdateComplete = $0 { return true }; return false }
        if case let .connectionUpdateComplete(update) = event {
            #expect(update.status == .unacceptableConnectionParameters)
            #expect(update.connectionInterval == 12, "unchanged")
        }
        #expect(try await pair.central.expectNothing("update on the central", for: .milliseconds(150)) { item in
            if case .connectionUpdateComplete? = item.le { return true }; return false
        })
    }

    @Test func aCentralHostThatMaskedTheRequestEventRefusesIt() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        var mask = HCITestHost.allLEEvents
        mask.remove(.remoteConnectionParameterRequest)
        try await central.initialize(leEvents: mask)
        try await peripheral.initialize()
        try await peripheral.advertise()
        _ = try await central.createConnection(to: peripheral.publicAddress)
        _ = try await central.connectionComplete()
        let handle = try await peripheral.connectionComplete().0.connectionHandle
        #expect(try await peripheral.status(LEConnectionUpdateCommand(connectionHandle: handle, connectionIntervalMin: 24, connectionIntervalMax: 40,
                                                                      maxLatency: 0, supervisionTimeout: 200)) == .success)
        let (event, _) = try await peripheral.leEvent("LE Connection Update Complete") { if case .connectionUpdateComplete = $0 { return true }; return false }
        if case let .connectionUpdateComplete(update) = event { #expect(update.status == .unsupportedRemoteFeature) }
    }

    @Test func enhancedConnectionCompleteV2WhenUnmasked() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize(leEvents: HCITestHost.allLEEvents.union(.enhancedConnectionCompleteV2))
        try await peripheral.initialize()
        try await peripheral.advertise()
        _ = try await central.createConnection(to: peripheral.publicAddress)
        let (event, _) = try await central.leEvent("connection complete") { event in
            switch event {
            case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2: return true
            default: return false
            }
        }
        guard case let .enhancedConnectionCompleteV2(complete) = event else {
            Issue.record("expected LE Enhanced Connection Complete [v2], got \(event)")
            return
        }
        #expect(complete.status == .success)
        #expect(complete.advertisingHandle == LEEnhancedConnectionCompleteV2Event.noAdvertisingHandle)
        #expect(try await peripheral.connectionComplete().0.role == .peripheral, "v1 where v2 is masked")
    }

    @Test func remoteFeaturesVersionRSSIAndPHY() async throws {
        let pair = try await ConnectedPair.make(distance: 10)
        #expect(try await pair.central.status(LEReadRemoteFeaturesCommand(connectionHandle: pair.centralHandle)) == .success)
        let (features, _) = try await pair.central.leEvent("LE Read Remote Features Complete") { if case .readRemoteFeaturesComplete = $0 { return true }; return false }
        if case let .readRemoteFeaturesComplete(complete) = features {
            #expect(complete.connectionHandle == pair.centralHandle)
            #expect(complete.features == VirtualController.defaultLEFeatures)
        }
        #expect(try await pair.peripheral.status(ReadRemoteVersionInformationCommand(connectionHandle: pair.peripheralHandle)) == .success)
        let (version, _) = try await pair.peripheral.event("Read Remote Version Information Complete") {
            if case .readRemoteVersionInformationComplete = $0 { return true }; return false
        }
        if case let .readRemoteVersionInformationComplete(complete) = version {
            #expect(complete.version == 0x0D)
            #expect(complete.companyIdentifier == 0xFFFF)
        }
        #expect(try await pair.central.run(ReadRSSICommand(connectionHandle: pair.centralHandle)).rssi == -60)

        let before = try await pair.central.run(LEReadPHYCommand(connectionHandle: pair.centralHandle))
        #expect(before.txPHY == .le1M)
        #expect(try await pair.central.status(LESetPHYCommand(connectionHandle: pair.centralHandle, txPHYs: .le2M, rxPHYs: .le2M)) == .success)
        for (host, handle) in [(pair.central, pair.centralHandle), (pair.peripheral, pair.peripheralHandle)] {
            let (event, _) = try await host.leEvent("LE PHY Update Complete") { if case .phyUpdateComplete = $0 { return true }; return false }
            if case let .phyUpdateComplete(update) = event {
                #expect(update.connectionHandle == handle)
                #expect(update.txPHY == .le2M)
                #expect(update.rxPHY == .le2M)
            }
        }
        #expect(try await pair.peripheral.run(LEReadPHYCommand(connectionHandle: pair.peripheralHandle)).rxPHY == .le2M)
    }

    @Test func dataLengthUpdate() async throws {
        let pair = try await ConnectedPair.make()
        #expect(pair.central.controller.dataLength(ofConnection: pair.centralHandle) == 27)
        #expect(try await pair.central.run(LESetDataLengthCommand(connectionHandle: pair.centralHandle, txOctets: 200, txTime: 1712)).connectionHandle == pair.centralHandle)
        for host in [pair.central, pair.peripheral] {
            let (event, _) = try await host.leEvent("LE Data Length Change") { if case .dataLengthChange = $0 { return true }; return false }
            guard case let .dataLengthChange(change) = event else { continue }
            if host === pair.central {
                #expect(change.maxTxOctets == 200)
                #expect(change.maxTxTime == 1712)
                #expect(change.maxRxOctets == 27)
            } else {
                #expect(change.maxTxOctets == 27)
                #expect(change.maxRxOctets == 200)
            }
        }
        #expect(pair.central.controller.dataLength(ofConnection: pair.centralHandle) == 200)
        #expect(try await pair.central.complete(LESetDataLengthCommand(connectionHandle: pair.centralHandle, txOctets: 300, txTime: 1712)).status == .invalidCommandParameters)
    }

    @Test func suggestedDefaultDataLengthAppliesToNewConnections() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let peripheral = HCITestHost(link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        try await central.initialize()
        try await peripheral.initialize()
        #expect(try await central.complete(LEWriteSuggestedDefaultDataLengthCommand(suggestedMaxTxOctets: 251, suggestedMaxTxTime: 2120)).status == .success)
        try await peripheral.advertise()
        _ = try await central.createConnection(to: peripheral.publicAddress)
        let (complete, _) = try await central.connectionComplete()
        let (event, _) = try await central.leEvent("LE Data Length Change") { if case .dataLengthChange = $0 { return true }; return false }
        if case let .dataLengthChange(change) = event {
            #expect(change.maxTxOctets == 251)
            #expect(change.maxRxOctets == 27)
        }
        #expect(central.controller.dataLength(ofConnection: complete.connectionHandle) == 251)
    }

    @Test func centralWithTwoPeripherals() async throws {
        let link = VirtualLink.manual()
        let central = HCITestHost(link.addController(name: "central", address: TestAddresses.central))
        let first = HCITestHost(link.addController(name: "first", address: TestAddresses.peripheral, position: .init(x: 2, y: 0)))
        let second = HCITestHost(link.addController(name: "second", address: TestAddresses.third, position: .init(x: 0, y: 3)))
        for host in [central, first, second] { try await host.initialize() }
        try await first.advertise()
        try await second.advertise()
        var handles: [UInt16] = []
        var peripheralHandles: [UInt16] = []
        for peripheral in [first, second] {
            #expect(try await central.createConnection(to: peripheral.publicAddress) == .success)
            handles.append(try await central.connectionComplete().0.connectionHandle)
            peripheralHandles.append(try await peripheral.connectionComplete().0.connectionHandle)
        }
        #expect(Set(handles).count == 2)
        #expect(central.controller.connectionHandles.count == 2)
        // Data to each reaches the right one.
        try central.sendACL(handle: handles[0], [3, 0, 0x04, 0x00, 1, 1, 1])
        try central.sendACL(handle: handles[1], [3, 0, 0x04, 0x00, 2, 2, 2])
        let (toFirst, _) = try await first.acl()
        let (toSecond, _) = try await second.acl()
        #expect(toFirst.data.suffix(3) == [1, 1, 1])
        #expect(toFirst.connectionHandle == peripheralHandles[0])
        #expect(toSecond.data.suffix(3) == [2, 2, 2])
        // One link dropping leaves the other up.
        #expect(central.controller.dropConnection(handle: handles[0]))
        #expect(try await first.disconnection(handle: peripheralHandles[0]).0.reason == .connectionTimeout)
        try central.sendACL(handle: handles[1], [1, 0, 0x04, 0x00, 9])
        #expect(try await second.acl().0.data == [1, 0, 0x04, 0x00, 9])
    }
}
