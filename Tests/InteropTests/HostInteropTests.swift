import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Testing

extension InteropSuites {
    /// Our host as a GATT central against a Bumble peripheral: every GAP and GATT procedure of
    /// the host-stack issue, over Bumble's virtual controllers (see Tests/InteropTests/bumble);
    /// scanning, connecting, discovery, long reads and writes, notifications and indications
    /// also over Rootcanal's (one for the suite).
    @Suite("Host against a Bumble peripheral", .sharedRootcanal)
    struct HostInteropTests {
        static let custom = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        static let longValue = "6E400004-B5A3-F393-E0A9-E50E24DCCA9E"
        static let indicating = "6E400005-B5A3-F393-E0A9-E50E24DCCA9E"
        static let readRefused = "6E400006-B5A3-F393-E0A9-E50E24DCCA9E"
        static let writeSink = "6E400007-B5A3-F393-E0A9-E50E24DCCA9E"

        // MARK: Scanning

        @Test("Active scan finds the peer with advertising and scan-response data merged", arguments: InteropController.allCases)
        func activeScan(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let peer = try rig.peer
                    let stream = try await host.scan(ScanOptions(active: true))
                    var found: Advertisement?
                    for try await advertisement in stream where advertisement.peer == peer && advertisement.scanResponse != nil {
                        found = advertisement
                        break
                    }
                    await host.stopScanning()
                    let advertisement = try #require(found)
                    #expect(advertisement.isConnectable)
                    // Bumble's controller reports -50 always; Rootcanal's a value that varies.
                    #expect(controller == .rootcanal || advertisement.rssi == -50)
                    #expect(advertisement.rssi.map { (-127...20).contains($0) } == true)
                    #expect(advertisement.serviceUUIDs.contains(BluetoothUUID(UInt16(0x180D))))
                    #expect(advertisement.data.manufacturerData == .init(companyID: 0xFFFF, data: [1, 2, 3, 4]))
                    // The name and the battery service data are only in the scan response.
                    #expect(advertisement.advertisingData.localName == nil)
                    #expect(advertisement.localName == "Bluejay Peer")
                    #expect(advertisement.data.serviceData(for: BluetoothUUID(UInt16(0x180F))) == [87])
                    #expect(advertisement.identifier == PeripheralIdentifier(address: peer))
                    #expect(advertisement.identifier.name == "Bluejay Peer")
                }
            }
        }

        @Test("Passive scan gets no scan response; the service filter keeps and drops peers", arguments: InteropController.allCases)
        func passiveScanAndServiceFilter(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let peer = try rig.peer
                    let passive = try await host.scan(ScanOptions(active: false, serviceUUIDs: [BluetoothUUID(UInt16(0x180D))]))
                    let first = try await collect(1, from: passive, timeout: .seconds(5))
                    await host.stopScanning()
                    #expect(first.first?.peer == peer)
                    #expect(first.first?.scanResponse == nil)
                    #expect(first.first?.localName == nil)

                    // A filter on a service the peer does not advertise reports nothing.
                    let filtered = try await host.scan(ScanOptions(active: true, serviceUUIDs: [BluetoothUUID(UInt16(0x1810))]))
                    let stopper = Task {
                        try await Task.sleep(for: .seconds(1))
                        await host.stopScanning()
                    }
                    var reports = 0
                    for try await _ in filtered { reports += 1 }
                    try await stopper.value
                    #expect(reports == 0)
                }
            }
        }

        @Test("With duplicates the same peer is reported again and again; without, once")
        func duplicates() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let peer = try rig.peer
                    let all = try await host.scan(ScanOptions(active: false, filterDuplicates: false))
                    let reports = try await collect(5, from: all, timeout: .seconds(10))
                    await host.stopScanning()
                    #expect(reports.count == 5)
                    #expect(reports.allSatisfy { $0.peer == peer })

                    let once = try await host.scan(ScanOptions(active: false, filterDuplicates: true))
                    let first = try await collect(1, from: once.filter { $0.peer == peer }, timeout: .seconds(10))
                    #expect(first.count == 1)
                    // Then nothing more of it for a second or longer (the peer goes on advertising;
                    // a loaded machine only lengthens the window).
                    let stopper = Task {
                        try await Task.sleep(for: .seconds(1))
                        await host.stopScanning()
                    }
                    var repeats = 0
                    for try await advertisement in once where advertisement.peer == peer { repeats += 1 }
                    try await stopper.value
                    #expect(repeats == 0, "a peer whose data does not change is reported once")
                }
            }
        }

        @Test("A second scan while one runs is refused")
        func oneScanAtATime() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let running = try await host.scan()
                    await #expect(throws: HostError.scanInProgress) { _ = try await host.scan() }
                    #expect(await host.isScanning)
                    await host.stopScanning()
                    #expect(await host.isScanning == false)
                    // The stopped scan's stream finishes, without an error.
                    try await withTimeout("the stopped scan's stream to finish", .seconds(10)) {
                        for try await _ in running {}
                    }
                }
            }
        }

        // MARK: Connecting and discovering

        @Test("Connect, exchange the MTU and discover the whole database", arguments: InteropController.allCases)
        func discoverDatabase(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer, timeout: .seconds(10))
                    #expect(connection.role == .central)
                    #expect(connection.gatt.mtu == 517)
                    let database = try await connection.gatt.discoverDatabase()
                    let services = database.map(\.service.uuid)
                    for expected in ["1800", "1801", "180D", "180A", "180F", Self.custom] {
                        #expect(services.contains(BluetoothUUID(stringLiteral: expected)), "service \(expected) in \(services)")
                    }
                    let heartRate = try #require(database.first { $0.service.uuid == BluetoothUUID(UInt16(0x180D)) })
                    let measurement = try #require(heartRate.characteristics.first { $0.characteristic.uuid == BluetoothUUID(UInt16(0x2A37)) })
                    #expect(measurement.characteristic.properties.contains(.notify))
                    #expect(measurement.clientConfigurationHandle != nil)
                    let location = try #require(heartRate.characteristics.first { $0.characteristic.uuid == BluetoothUUID(UInt16(0x2A38)) })
                    #expect(location.characteristic.properties.isSuperset(of: [.read, .write]))
                    // Handles are ordered and inside their service.
                    for service in database {
                        for item in service.characteristics {
                            #expect(service.service.handleRange.contains(item.characteristic.valueHandle))
                        }
                    }
                    // Discovering by UUID finds the same service range.
                    let byUUID = try await connection.gatt.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x180D)))
                    #expect(byUUID == [heartRate.service])
                    try await connection.disconnect()
                }
            }
        }

        // MARK: Reading and writing

        @Test("Short reads, a long read through Read Blob, and the refused read's named ATT error", arguments: InteropController.allCases)
        func reads(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let gatt = connection.gatt
                    #expect(try await gatt.read(try await gatt.characteristic("180D", "2A38")) == [0x01])
                    #expect(try await gatt.read(try await gatt.characteristic("180A", "2A25")) == Array("SN-0001".utf8))
                    #expect(try await gatt.read(try await gatt.characteristic("180F", "2A19")) == [87])

                    let long = try await gatt.read(try await gatt.characteristic(Self.custom, Self.longValue))
                    #expect(long.count == 600)
                    #expect(long == (0..<600).map { UInt8($0 % 256) })

                    let refused = try await gatt.characteristic(Self.custom, Self.readRefused)
                    do {
                        _ = try await gatt.read(refused)
                        Issue.record("the read should have been refused")
                    } catch let HostError.att(error) {
                        #expect(error.code == .readNotPermitted)
                        #expect(error.requestOpcode == .readRequest)
                        #expect("\(error)".contains("Read Not Permitted"))
                    }
                    try await connection.disconnect()
                }
            }
        }

        @Test("Writes with response, without response, and long through prepared writes", arguments: InteropController.allCases)
        func writes(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let gatt = connection.gatt

                    let location = try await gatt.characteristic("180D", "2A38")
                    try await gatt.write([0x02], to: location)
                    let written = try await rig.waitForEvent(named: "written") { $0.string("uuid") == "2A38" }
                    #expect(written.bytes("value") == [0x02])
                    #expect(written.bool("with_response") == true)
                    #expect(try await gatt.read(location) == [0x02])

                    let sink = try await gatt.characteristic(Self.custom, Self.writeSink)
                    for index in 0..<20 {
                        try await gatt.writeWithoutResponse([UInt8(index), 0xAA], handle: sink.valueHandle)
                    }
                    var values: [[UInt8]] = []
                    for _ in 0..<20 {
                        let event = try await rig.waitForEvent(named: "written") { $0.string("uuid") == Self.writeSink }
                        #expect(event.bool("with_response") == false)
                        values.append(event.bytes("value") ?? [])
                    }
                    #expect(values == (0..<20).map { [UInt8($0), 0xAA] }, "every write without response arrived, in order")

                    let long = try await gatt.characteristic(Self.custom, Self.longValue)
                    let value = (0..<600).map { UInt8(255 - $0 % 256) }
                    try await gatt.write(value, to: long)
                    let longWrite = try await rig.waitForEvent(named: "written") { $0.string("uuid") == Self.longValue }
                    #expect(longWrite.bool("prepared") == true)
                    #expect(longWrite.bytes("value") == value)
                    #expect(try await gatt.read(long) == value)

                    // Write without response is limited to one PDU.
                    await #expect(throws: HostError.self) {
                        try await gatt.writeWithoutResponse(Array(repeating: 0, count: 600), handle: sink.valueHandle)
                    }
                    try await connection.disconnect()
                }
            }
        }

        // MARK: Notifications and indications

        @Test("1000 notifications arrive in order, none lost", arguments: InteropController.allCases)
        func thousandNotifications(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let measurement = try await connection.gatt.characteristic("180D", "2A37")
                    let values = try await connection.gatt.subscribe(to: measurement)
                    let subscribed = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" }
                    #expect(subscribed.bool("notify") == true)
                    try rig.send(.notify(uuid: "2A37", count: 1000))
                    let received = try await collect(1000, from: values, timeout: .seconds(60))
                    let sequence = received.map { value -> Int in
                        guard value.count == 3, value[0] == 0x01 else { return -1 }
                        return Int(value[1]) | Int(value[2]) << 8
                    }
                    #expect(sequence == Array(0..<1000))
                    try await connection.gatt.unsubscribe(from: measurement)
                    let cleared = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" }
                    #expect(cleared.bool("notify") == false)
                    try await connection.disconnect()
                }
            }
        }

        @Test("Indications are delivered and confirmed", arguments: InteropController.allCases)
        func indications(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let characteristic = try await connection.gatt.characteristic(Self.custom, Self.indicating)
                    let values = try await connection.gatt.subscribe(to: characteristic)
                    let subscribed = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == Self.indicating }
                    #expect(subscribed.bool("indicate") == true)
                    let ack = try await rig.request(.indicate(uuid: Self.indicating, count: 10), timeout: .seconds(30))
                    #expect(ack.int("confirmed") ?? ack.int("count") == 10)
                    let received = try await collect(10, from: values, timeout: .seconds(10))
                    #expect(received.map { Int($0[0]) } == Array(0..<10))
                    try await connection.disconnect()
                }
            }
        }

        @Test("A Service Changed indication invalidates the cached services in its range")
        func serviceChanged() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    #expect(try await connection.gatt.enableServiceChangedIndications())
                    _ = try await connection.gatt.discoverAllPrimaryServices()
                    let changes = connection.gatt.serviceChanges()
                    let ack = try await rig.request(.addService())
                    let change = try #require(try await collect(1, from: changes, timeout: .seconds(5)).first)
                    let start = try #require(ack.int("start"))
                    let end = try #require(ack.int("end"))
                    #expect(change.affectedHandles.overlaps(UInt16(start)...UInt16(end)))
                    let services = try await connection.gatt.discoverAllPrimaryServices()
                    #expect(services.contains { $0.uuid == BluetoothUUID(stringLiteral: "6E400101-B5A3-F393-E0A9-E50E24DCCA9E") })
                    try await connection.disconnect()
                }
            }
        }

        // MARK: Disconnections

        @Test("Our disconnection reaches the peer with its reason")
        func localDisconnect() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    try await connection.disconnect(reason: .remoteUserTerminatedConnection)
                    #expect(connection.isConnected == false)
                    // The specification has the local controller report Connection Terminated By
                    // Local Host (Core 6.0, Vol 4, Part E, 7.1.6); Bumble reports the reason sent.
                    let reason = try #require(connection.disconnectReason)
                    #expect([HCIStatus.connectionTerminatedByLocalHost, .remoteUserTerminatedConnection].contains(reason))
                    let event = try await rig.waitForEvent(named: "disconnected")
                    #expect(event.int("reason") == 0x13)
                    #expect(await host.connections.isEmpty)
                }
            }
        }

        @Test("The peer's disconnection is reported with its reason")
        func peerDisconnect() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let events = await host.events()
                    let connection = try await host.connect(to: try rig.peer)
                    try rig.send(.disconnect(reason: 0x15))
                    let reason = try await connection.waitForDisconnection()
                    #expect(reason == .remoteDeviceTerminatedPowerOff)
                    var sawDisconnected = false
                    for await event in events {
                        if case let .disconnected(closed, reason) = event {
                            #expect(closed === connection)
                            #expect(reason == .remoteDeviceTerminatedPowerOff)
                            sawDisconnected = true
                            break
                        }
                    }
                    #expect(sawDisconnected)
                    // Operations on the closed connection fail at once with the reason.
                    await #expect(throws: HostError.disconnected(reason: .remoteDeviceTerminatedPowerOff)) {
                        _ = try await connection.gatt.discoverAllPrimaryServices()
                    }
                }
            }
        }

        @Test("The peer dropping the link during a read fails that read at once")
        func dropDuringRead() async throws {
            try await withBumbleRig { rig in
                // On a manual clock no timeout can fire: the read fails because of the disconnection.
                try await withHost(on: rig, configuration: .manual(ManualClock())) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let location = try await connection.gatt.characteristic("180D", "2A38")
                    _ = try await rig.request(.dropOnNextRead(uuid: "2A38", reason: 0x13))
                    await #expect(throws: HostError.disconnected(reason: .remoteUserTerminatedConnection)) {
                        _ = try await connection.gatt.read(location)
                    }
                }
            }
        }

        @Test("Connecting to an absent device times out and cancels the attempt")
        func connectTimeout() async throws {
            try await withBumbleRig { rig in
                let clock = ManualClock()
                try await withHost(on: rig, configuration: .manual(clock)) { host in
                    let absent = DeviceAddress(BluetoothAddress("C0:00:00:00:0A:0B") ?? .zero, type: .random)
                    let attempt = Task { try await host.connect(to: absent, timeout: .milliseconds(500)) }
                    try await waitUntil("the attempt under way") { await host.isConnecting }
                    // The controller took the command (whose own timer is gone): the attempt's timer is
                    // the one sleeping on the host's clock. It gives up at 500 ms and answers at once
                    // (time does not move again).
                    try await withTimeout("the connect timer", .seconds(10)) { try await clock.waitForSleepingTasks(1) }
                    clock.advance(by: .milliseconds(499))
                    #expect(await host.isConnecting, "still trying at 499 ms")
                    clock.advance(by: .milliseconds(1))
                    await #expect(throws: HostError.connectionTimeout(absent)) {
                        _ = try await withTimeout("the attempt's answer", .seconds(10)) { try await attempt.value }
                    }
                    #expect(await !host.isConnecting)
                    // The controller is free again: a real connection still works.
                    let connection = try await host.connect(to: try rig.peer)
                    try await connection.disconnect()
                }
            }
        }

        @Test("Cancelling the connecting task cancels the attempt")
        func connectCancel() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let absent = DeviceAddress(BluetoothAddress("C0:00:00:00:0A:0C") ?? .zero, type: .random)
                    let attempt = Task { try await host.connect(to: absent, timeout: nil) }
                    try await waitUntil("the attempt under way") { await host.isConnecting }
                    attempt.cancel()
                    await #expect(throws: HostError.cancelled) { _ = try await attempt.value }
                }
            }
        }

        // MARK: Several connections

        @Test("Two peripherals connected at once, each with its own ATT bearer")
        func twoConnections() async throws {
            try await withBumbleRig(peripherals: 2) { rig in
                try await withHost(on: rig) { host in
                    let first = try await host.connect(to: try rig.peripheralAddress(1))
                    let second = try await host.connect(to: try rig.peripheralAddress(2))
                    #expect(first.handle != second.handle)
                    #expect(await host.connections.count == 2)
                    async let serial1 = first.gatt.read(try await first.gatt.characteristic("180A", "2A25"))
                    async let serial2 = second.gatt.read(try await second.gatt.characteristic("180A", "2A25"))
                    #expect(try await serial1 == Array("SN-0001".utf8))
                    #expect(try await serial2 == Array("SN-0002".utf8))

                    // Notifications of one connection do not reach the other.
                    let measurement1 = try await first.gatt.characteristic("180D", "2A37")
                    let measurement2 = try await second.gatt.characteristic("180D", "2A37")
                    let values1 = try await first.gatt.subscribe(to: measurement1)
                    let values2 = try await second.gatt.subscribe(to: measurement2)
                    try rig.send(.notify(uuid: "2A37", count: 5, start: 100, peripheral: 1))
                    try rig.send(.notify(uuid: "2A37", count: 5, start: 200, peripheral: 2))
                    let got1 = try await collect(5, from: values1, timeout: .seconds(10))
                    let got2 = try await collect(5, from: values2, timeout: .seconds(10))
                    #expect(got1.map { Int($0[1]) | Int($0[2]) << 8 } == Array(100..<105))
                    #expect(got2.map { Int($0[1]) | Int($0[2]) << 8 } == Array(200..<205))
                    try await first.disconnect()
                    #expect(second.isConnected)
                    try await second.disconnect()
                }
            }
        }
    }
}
