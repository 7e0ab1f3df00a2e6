import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import Testing

extension InteropSuites {
    /// The less common procedures of the host against a Bumble peripheral: L2CAP signaling,
    /// SMP refusal, Read Multiple, included services, the ATT transaction timeout, and the loss
    /// of the transport.
    @Suite("Host protocol details against a Bumble peripheral")
    struct HostProtocolInteropTests {
        @Test("A connection parameter update requested over L2CAP is accepted and applied")
        func connectionParameterUpdate() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let ack = try await rig.request(RigCommand("update_parameters", [
                        "interval_min_ms": .number(45), "interval_max_ms": .number(45), "latency": .number(2), "timeout_ms": .number(6000),
                    ]))
                    #expect(ack.int("latency") == 2, "\(ack)")
                    // 45 ms is 36 units of 1.25 ms; 6000 ms is 600 units of 10 ms.
                    let deadline = ContinuousClock.now.advanced(by: .seconds(5))
                    while connection.parameters.interval != 36, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(connection.parameters == ConnectionParameters(interval: 36, peripheralLatency: 2, supervisionTimeout: 600))
                    try await connection.disconnect()
                }
            }
        }

        @Test("A Pairing Request to our central is refused with Command Not Supported; an L2CAP channel request is refused")
        func refusals() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let pairing = try await rig.request(RigCommand("pair"))
                    #expect(pairing.bool("paired") == false)
                    // Bumble's peripheral sends a Pairing Request, which only a central may send
                    // (Core 6.0, Vol 3, Part H, 3.5.1).
                    #expect(pairing.string("error")?.contains("COMMAND_NOT_SUPPORTED") == true, "\(pairing)")

                    let channel = try await rig.request(RigCommand("open_l2cap", ["spsm": .number(0x80)]))
                    #expect(channel.bool("opened") == false)
                    #expect(channel.string("error")?.contains("PSM_NOT_SUPPORTED") == true, "\(channel)")

                    // The link survives both refusals.
                    #expect(try await connection.gatt.read(try await connection.gatt.characteristic("180D", "2A38")) == [0x01])
                    try await connection.disconnect()
                }
            }
        }

        @Test("Read Multiple, Read Multiple Variable, read by type, included services")
        func readMultipleAndIncludes() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let gatt = connection.gatt
                    let location = try await gatt.characteristic("180D", "2A38")
                    let battery = try await gatt.characteristic("180F", "2A19")
                    #expect(try await gatt.readMultiple(handles: [location.valueHandle, battery.valueHandle]) == [0x01, 87])
                    #expect(try await gatt.readMultipleVariable(handles: [location.valueHandle, battery.valueHandle]) == [[0x01], [87]])
                    let byType = try await gatt.readValues(ofType: BluetoothUUID(UInt16(0x2A25)))
                    #expect(byType.map(\.value) == [Array("SN-0001".utf8)])

                    let custom = try #require(try await gatt.discoverPrimaryServices(
                        uuid: BluetoothUUID(stringLiteral: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")).first)
                    let included = try await gatt.discoverIncludedServices(of: custom)
                    let batteryService = try #require(try await gatt.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x180F))).first)
                    #expect(included.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180F))])
                    #expect(included.first?.service.handleRange == batteryService.handleRange)
                    try await connection.disconnect()
                }
            }
        }

        @Test("A request the peer never answers times out, closes the bearer and drops the link")
        func attTransactionTimeout() async throws {
            try await withBumbleRig { rig in
                // The host's timers run on a manual clock: connecting and discovery take what
                // they take, and the transaction timeout fires when the test moves time.
                let clock = ManualClock()
                var configuration = HostConfiguration()
                configuration.clock = .manual(clock)
                try await withHost(on: rig, configuration: configuration) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let location = try await connection.gatt.characteristic("180D", "2A38")
                    _ = try await rig.request(RigCommand("ignore_next_request"))
                    let read = Task { try await connection.gatt.read(location) }
                    _ = try await rig.waitForEvent(named: "ignored")
                    // The bearer's watchdog is the one timer left running.
                    try await withTimeout("the ATT watchdog", .seconds(10)) { try await clock.waitForSleepingTasks(1) }
                    clock.advance(by: .seconds(29))
                    #expect(clock.sleepingTaskCount == 1, "the watchdog still waits at 29 s")
                    clock.advance(by: .seconds(1))
                    await #expect(throws: HostError.attTransactionTimeout) { _ = try await read.value }
                    // No ATT PDU may follow on this bearer: later requests fail at once.
                    await #expect(throws: HostError.self) { _ = try await connection.gatt.read(location) }
                    let reason = try await connection.waitForDisconnection()
                    #expect(reason == .connectionTerminatedByLocalHost || reason == .remoteUserTerminatedConnection)
                }
            }
        }

        @Test("Read RSSI is refused by Bumble's controller with a typed HCI error")
        func readRSSIUnsupported() async throws {
            try await withBumbleRig { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    await #expect(throws: HostError.hci(.commandFailed(ReadRSSICommand.opcode, .unknownCommand))) {
                        _ = try await connection.readRSSI()
                    }
                    try await connection.disconnect()
                }
            }
        }

        @Test("Losing the transport fails the pending request and every later operation")
        func transportLoss() async throws {
            let rig = try BumbleRig.start()
            _ = try await rig.waitForReady()
            let host = LEHost(transport: try SystemTransports.open(rig.transportSpecification))
            try await host.powerOn()
            let events = await host.events()
            let connection = try await host.connect(to: try rig.peer)
            let location = try await connection.gatt.characteristic("180D", "2A38")
            _ = try await rig.request(RigCommand("ignore_next_request"))
            let pending = Task { try await connection.gatt.read(location) }
            _ = try await rig.waitForEvent(named: "ignored")

            await rig.shutdown()

            do {
                _ = try await pending.value
                Issue.record("the pending read should fail")
            } catch let error as HostError {
                guard case .transportClosed = error else {
                    Issue.record("expected transportClosed, got \(error)")
                    return
                }
            }
            var sawClosed = false
            for await event in events {
                if case .transportClosed = event { sawClosed = true }
            }
            #expect(sawClosed, "the event stream ends with transportClosed")
            #expect(connection.isConnected == false)
            await #expect(throws: HostError.self) { _ = try await host.connect(to: try rig.peer) }
            await #expect(throws: HostError.self) { _ = try await host.scan() }
            await host.shutdown()
        }
    }
}
