import Bluejay
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Foundation
import Synchronization
import Testing

extension InteropSuites {
    /// A Bumble peripheral that lies (`bumble/bluejay_hostile.py`): discovery answers with
    /// impossible handles, PDUs larger than the MTU, responses to requests never sent,
    /// requests never answered, floods, malformed signalling, truncated ATT PDUs and ACL
    /// starts. Each lie gets a typed error where a caller waits; nothing crashes; the link
    /// (or, after a timeout, a new link) serves the next honest request.
    @Suite("Hostile Bumble peripheral")
    struct HostilePeripheralInteropTests {
        static let hostile = ["--plugin", "bluejay_hostile"]

        /// One lie about the database, and the discovery procedure it breaks.
        struct DiscoveryLie: Sendable, CustomTestStringConvertible {
            var name: String
            /// The request whose answer is replaced.
            var opcode: UInt8
            /// The answer, given the honest heart-rate service range.
            var answer: @Sendable (ClosedRange<UInt16>) -> [UInt8]
            /// The procedure that hears the lie.
            var run: @Sendable (GATTClient, GATTService) async throws -> Void

            var testDescription: String { name }

            static func characteristics(_ answer: @escaping @Sendable (ClosedRange<UInt16>) -> [UInt8], _ name: String) -> DiscoveryLie {
                DiscoveryLie(name: name, opcode: 0x08, answer: answer) { gatt, service in _ = try await gatt.discoverCharacteristics(of: service) }
            }

            static let all: [DiscoveryLie] = [
                // The lie that crashed `bluejay gatt` (an unsigned underflow).
                characteristics({ range in
                    let s = range.lowerBound
                    return RawATT.characteristicDeclarations([(s + 1, 0x10, s + 2, 0x2A37), (0, 0x02, s + 4, 0x2A38), (s + 3, 0x02, s + 4, 0x2A38)])
                }, "a characteristic declaration at handle 0 between two valid ones"),
                characteristics({ range in RawATT.characteristicDeclarations([(range.lowerBound + 1, 0x02, 0xFFF0, 0x2A38)]) },
                                "a value handle outside the service"),
                characteristics({ range in RawATT.characteristicDeclarations([(range.lowerBound + 1, 0x02, 0, 0x2A38)]) },
                                "a value handle of zero"),
                characteristics({ _ in RawATT.characteristicDeclarations([(0xFFFE, 0x02, 0xFFFF, 0x2A38)]) },
                                "a declaration beyond the requested range"),
                characteristics({ range in
                    let s = range.lowerBound
                    return RawATT.characteristicDeclarations([(s + 3, 0x02, s + 4, 0x2A38), (s + 1, 0x10, s + 2, 0x2A37)])
                }, "declarations in descending order"),
                characteristics({ _ in [0x09, 7] }, "a Read By Type Response with no entry"),
                characteristics({ range in [0x09, 7] + RawATT.le(range.lowerBound + 1) + [0x02, 0x05] }, "a Read By Type Response cut inside an entry"),
                characteristics({ range in [0x09, 1] + RawATT.le(range.lowerBound + 1) }, "a Read By Type Response whose entries are shorter than a handle"),
                DiscoveryLie(name: "a service at handle 0", opcode: 0x10, answer: { _ in RawATT.serviceGroups([(0, 5, 0x1800)]) }) { gatt, _ in
                    _ = try await gatt.discoverAllPrimaryServices()
                },
                DiscoveryLie(name: "a service ending before it starts", opcode: 0x10,
                             answer: { _ in RawATT.serviceGroups([(0x10, 0x05, 0x180D)]) }) { gatt, _ in
                    _ = try await gatt.discoverAllPrimaryServices()
                },
                DiscoveryLie(name: "a service by UUID at handle 0", opcode: 0x06, answer: { _ in [0x07] + RawATT.le(0) + RawATT.le(5) }) { gatt, _ in
                    _ = try await gatt.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x180D)))
                },
                DiscoveryLie(name: "a descriptor outside the characteristic", opcode: 0x04,
                             answer: { _ in [0x05, 0x01] + RawATT.le(0xFFFF) + RawATT.le(0x2902) }) { gatt, service in
                    let measurement = try #require(try await gatt.discoverCharacteristics(of: service, uuid: BluetoothUUID(UInt16(0x2A37))).first)
                    _ = try await gatt.discoverDescriptors(of: measurement)
                },
                DiscoveryLie(name: "a Find Information Response of an unknown format", opcode: 0x04,
                             answer: { range in [0x05, 0x03] + RawATT.le(range.lowerBound + 3) + RawATT.le(0x2902) }) { gatt, service in
                    let measurement = try #require(try await gatt.discoverCharacteristics(of: service, uuid: BluetoothUUID(UInt16(0x2A37))).first)
                    _ = try await gatt.discoverDescriptors(of: measurement)
                },
            ]
        }

        @Test("Discovery that lies about handles fails with a protocol violation; honest discovery and a read follow on the same link")
        func discoveryLies() async throws {
            try await withHostileLink { rig, connection in
                let gatt = connection.gatt
                let service = try #require(try await gatt.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x180D))).first)
                let location = try await gatt.characteristic("180D", "2A38")
                for lie in DiscoveryLie.all {
                    try await rig.answer(lie.opcode, with: [lie.answer(service.handleRange)])
                    await expectProtocolViolation(lie.name) { try await lie.run(gatt, service) }
                    _ = try await rig.waitForEvent(named: "hostile_answered")
                    #expect(try await gatt.read(location) == [0x01], "after \(lie.name)")
                }
                let honest = try await gatt.discoverCharacteristics(of: service)
                #expect(honest.map(\.uuid) == [BluetoothUUID(UInt16(0x2A37)), BluetoothUUID(UInt16(0x2A38))])
                #expect(connection.isConnected)
            }
        }

        @Test("Bluejay against a zero-handle characteristic declaration: the read fails with a typed error, the app goes on")
        func bluejayZeroHandle() async throws {
            try await withBluejay(arguments: Self.hostile) { rig, bluejay in
                let peripheral = try rig.peripheral().identifier()
                try await connect(bluejay, to: peripheral, rig: rig)
                // Every characteristic discovery from now on hears the lie.
                let lie = RawATT.characteristicDeclarations([(0x0010, 0x10, 0x0011, 0x2A37), (0, 0x02, 0x0014, 0x2A38), (0x0013, 0x02, 0x0014, 0x2A38)])
                try await rig.answer(0x08, with: [lie], times: -1)
                let failed: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Peer.bodySensorLocation) { done($0) } }
                guard case let .failure(.host(.protocolViolation(text))) = failed else {
                    Issue.record("expected a protocol violation, got \(failed)")
                    return
                }
                #expect(text.contains("out of order") || text.contains("malformed"), "\(text)")
                #expect(bluejay.isConnected)

                try await rig.hostile("off")
                let location: UInt8 = try await bluejay.read(from: Peer.bodySensorLocation)
                #expect(location == 0x01)
            }
        }

        @Test("PDUs larger than the ATT MTU: a response fails its request, a notification is dropped, an indication is still confirmed")
        func largerThanMTU() async throws {
            var configuration = HostConfiguration()
            configuration.exchangesMTUOnConnect = false
            try await withHostileLink(configuration: configuration) { rig, connection in
                let gatt = connection.gatt
                #expect(gatt.mtu == 23)
                let location = try await gatt.characteristic("180D", "2A38")
                let measurement = try await gatt.characteristic("180D", "2A37")
                let (received, subscription) = try await gatt.record(measurement)
                defer { subscription.cancel() }

                // A 40-octet Read Response at MTU 23.
                try await rig.answer(0x0A, with: [RawATT.readResponse(Array(repeating: 0xAA, count: 39))])
                let text = await expectProtocolViolation("a response of 40 octets") { _ = try await gatt.readValue(handle: location.valueHandle) }
                #expect(text?.contains("exceeds ATT_MTU 23") == true, "\(text ?? "")")
                #expect(try await gatt.read(location) == [0x01])

                // An oversized notification and indication, then an honest notification: only
                // the honest one arrives, and the indication was confirmed all the same.
                try await rig.record(cid: 4)
                try await rig.sendRaw([
                    RawATT.notification(measurement.valueHandle, [0x01] + Array(repeating: 0xEE, count: 60)),
                    RawATT.indication(measurement.valueHandle, Array(repeating: 0xEE, count: 60)),
                    RawATT.notification(measurement.valueHandle, [0x01, 0x07, 0x00]),
                ])
                #expect(await received.wait(forCount: 1) == [[0x01, 0x07, 0x00]])
                _ = try await rig.waitForL2CAP(cid: 4) { $0 == RawATT.confirmation }

                // After an exchange to 517, a 600-octet response is refused the same way.
                #expect(try await gatt.exchangeMTU(517) == 517)
                let long = try await gatt.characteristic(Self.custom, Self.longValue)
                try await rig.answer(0x0A, with: [RawATT.readResponse(Array(repeating: 0x55, count: 599))])
                let longer = await expectProtocolViolation("a response of 600 octets") { _ = try await gatt.readValue(handle: long.valueHandle) }
                #expect(longer?.contains("exceeds ATT_MTU 517") == true, "\(longer ?? "")")
                #expect(try await gatt.read(long) == (0..<600).map { UInt8($0 % 256) })
            }
        }

        @Test("Responses to requests never sent are dropped: they answer nothing, change no MTU, and the next requests get their own answers")
        func unsolicitedResponses() async throws {
            try await withHostileLink { rig, connection in
                let gatt = connection.gatt
                let location = try await gatt.characteristic("180D", "2A38")
                let mtu = gatt.mtu
                // While nothing is outstanding.
                try await rig.sendRaw([
                    RawATT.readResponse(Array("BOGUS".utf8)),
                    [0x13],
                    RawATT.errorResponse(0x0A, handle: location.valueHandle, code: 0x0E),
                    [0x03] + RawATT.le(100),
                    [0x05, 0x01] + RawATT.le(0x0020) + RawATT.le(0x2902),
                    RawATT.serviceGroups([(0x0001, 0xFFFF, 0x1800)]),
                    [0x19],
                    [0x0D, 0xAA],
                ])
                // A request whose answer none of these can be: once it is answered, every PDU
                // sent before its answer was handled.
                #expect(try await gatt.readValues(ofType: BluetoothUUID(UInt16(0x2A25))).map(\.value) == [Array("SN-0001".utf8)])
                #expect(try await gatt.readValue(handle: location.valueHandle) == [0x01])
                #expect(gatt.mtu == mtu, "an Exchange MTU Response nobody asked for changes nothing")

                // While a read is outstanding: answers to other requests, then the real one.
                try await rig.answer(0x0A, with: [
                    [0x13],
                    RawATT.errorResponse(0x12, handle: location.valueHandle, code: 0x03),
                    RawATT.characteristicDeclarations([(0x0010, 0x02, 0x0011, 0x2A38)]),
                    [0x0D, 0xAA, 0xBB],
                ], serve: true)
                #expect(try await gatt.readValue(handle: location.valueHandle) == [0x01])
                #expect(try await gatt.read(location) == [0x01])
            }
        }

        @Test("A peer that stops answering: Bluejay's read times out, the queued one fails when the ATT timeout closes the link, auto-reconnect brings the app back")
        func neverAnswers() async throws {
            // Bluejay's and the host's timers on a clock only the test moves: the operation
            // limit (25 s) and the ATT transaction timeout (30 s) fire exactly when it says.
            let clock = ManualClock()
            try await withBluejay(arguments: Self.hostile, clock: .manual(clock), options: { $0.operationTimeout = .seconds(25) }) { rig, bluejay in
                let peripheral = try rig.peripheral().identifier()
                let recorder = Recorder()
                bluejay.register(connectionObserver: recorder)
                try await connect(bluejay, to: peripheral, rig: rig)
                try await rig.answer(nil, with: [], times: -1)
                let first = AwaitableLog<ReadResult<UInt8>>()
                let second = AwaitableLog<ReadResult<UInt8>>()
                bluejay.read(from: Peer.bodySensorLocation) { first.append($0) }
                bluejay.read(from: Peer.batteryLevel) { second.append($0) }
                // The request reached the peer: its time limit and the transaction timeout run.
                _ = try await rig.waitForEvent(named: "hostile_answered")
                clock.advance(by: .seconds(24))
                #expect(first.count == 0, "the limit is 25 s")
                clock.advance(by: .seconds(1))
                guard case let .failure(.timedOut(operation, after))? = await first.wait(forCount: 1)?.first else {
                    Issue.record("the first read should time out: \(first.items)")
                    return
                }
                #expect(operation.contains("2A38") && after == .seconds(25))
                // The queue moved on: the second read waits behind the unanswered request, until
                // the transaction timeout (30 s after that request) closes the bearer and the link.
                try await rig.hostile("off")
                #expect(second.count == 0)
                clock.advance(by: .seconds(5))
                let failed = await second.wait(forCount: 1)?.first
                switch failed {
                case .failure(.peripheralNotResponding)?, .failure(.disconnected)?: break
                default: Issue.record("the second read should fail with the ATT timeout, got \(String(describing: failed))")
                }
                // Bluejay reconnects on its own, and the app reads again.
                try await waitUntil("the disconnection") { recorder.count("disconnected") == 1 }
                try await waitUntil("the reconnection") { recorder.count("connected") == 2 && bluejay.isConnected }
                let location: UInt8 = try await bluejay.read(from: Peer.bodySensorLocation)
                #expect(location == 0x01)
            }
        }

        @Test("Notification and indication floods: every notification of the subscribed value arrives in order, each indication is confirmed, reads still work")
        func floods() async throws {
            try await withHostileLink { rig, connection in
                let gatt = connection.gatt
                let location = try await gatt.characteristic("180D", "2A38")
                let measurement = try await gatt.characteristic("180D", "2A37")
                let battery = try await gatt.characteristic("180F", "2A19")
                let count = 3000
                let received = AwaitableLog<[UInt8]>()
                let subscription = try await gatt.subscribe(to: measurement) { values in
                    for value in values { received.append(Array(value.value)) }
                }
                // Straight from the controller, as fast as the peer can write: numbered values on
                // the subscribed characteristic, interleaved with values of one nobody subscribed to.
                let flood = (0..<count).flatMap { index in
                    [RawATT.notification(measurement.valueHandle, [0x01] + RawATT.le(UInt16(index))), RawATT.notification(battery.valueHandle, [UInt8(index % 256)])]
                }
                try await rig.sendRaw(flood, inject: true)
                #expect(try await gatt.read(location) == [0x01])
                let values = try #require(await received.wait(forCount: count, timeout: .seconds(20)), "\(received.count) of \(count) arrived")
                #expect(values == (0..<count).map { [0x01] + RawATT.le(UInt16($0)) }, "in order, none lost or repeated")

                // Indications without waiting for confirmations (a protocol violation): one
                // confirmation each, nothing else.
                try await rig.record(cid: 4, events: false)
                let indications = 200
                try await rig.sendRaw([RawATT.indication(battery.valueHandle, [1])], count: indications, inject: true)
                let answers = try await rig.waitForRecorded(indications, cid: 4)
                #expect(answers.count == indications)
                #expect(answers.allSatisfy { $0 == RawATT.confirmation })
                #expect(try await gatt.read(battery) == [87])
                subscription.cancel()
            }
        }

        /// One peer floods LE signalling (credits for a channel that does not exist, straight
        /// from the controller, faster than any radio) while the host talks to a second Bumble
        /// peer: the flood's PDUs past its link's bound are dropped, the other link's channel
        /// responses, credits and pairing steps all arrive (the bound is per link).
        @Test("A peer flooding signalling does not starve another: a second Bumble peer on the same host opens an L2CAP channel and pairs meanwhile")
        func signallingFloodDoesNotStarveAnotherLink() async throws {
            try await withBumbleRig(peripherals: 2, arguments: Self.hostile + ["--plugin", "bluejay_l2cap", "--plugin", "bluejay_pairing"]) { rig in
                _ = try await rig.request("l2cap_server", ["psm": 0x81, "mode": "echo", "mtu": 256, "mps": 64, "max_credits": 4])
                // A small bound: a batch of the flood fills it well before the other peer's PDUs
                // (the host keeps up with Python's flood, so the default 256 is rarely reached).
                var configuration = HostConfiguration()
                configuration.limits.queuedPeerPDUs = 4
                try await withHost(on: rig, configuration: configuration) { host in
                    let flooder = try await host.connect(to: try rig.peripheralAddress(1))
                    let other = try await host.connect(to: try rig.peripheralAddress(2))
                    let credit: [UInt8] = [0x16, 0x01, 0x04, 0x00, 0x77, 0x00, 0x01, 0x00]
                    // The second peer runs between bursts of the flood: its answers arrive amid it.
                    async let firstFlood = rig.sendRaw([credit], cid: 5, count: 100_000, inject: true, pauseEvery: 50)
                    let channel = try await other.openChannel(psm: 0x81, parameters: .init(mtu: 256, mps: 64, initialCredits: 4))
                    _ = try await firstFlood
                    async let secondFlood = rig.sendRaw([credit], cid: 5, count: 100_000, inject: true, pauseEvery: 50)
                    let security = try await host.pair(other)
                    _ = try await secondFlood
                    #expect(security.isEncrypted)
                    let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
                    for start in stride(from: 0, to: data.count, by: 200) { try await channel.write(Array(data[start..<(start + 200)])) }
                    var echoed: [UInt8] = []
                    while echoed.count < data.count { echoed += try await channel.read() }
                    #expect(echoed == data, "credits came back through the flood")
                    #expect(host.dropCounts.droppedHostItems > 0, "the flood passed its own link's bound")
                    #expect(flooder.isConnected)
                    channel.close()
                    try await other.disconnect()
                    try await flooder.disconnect()
                }
            }
        }

        @Test("Malformed LE signalling is answered as the specification says; a connection parameter update that breaks the rules is rejected")
        func malformedSignalling() async throws {
            try await withHostileLink { rig, connection in
                let parameters = connection.parameters
                try await rig.record(cid: 5)
                let packets: [[UInt8]] = [
                    [0x7F, 0x01, 0x00, 0x00],                                    // unknown code
                    [0x12, 0x02],                                                // header cut short
                    [0x12, 0x03, 0x08, 0x00, 0x06, 0x00],                        // length says 8, 2 follow
                    [0x12, 0x04, 0x08, 0x00] + RawATT.le(0x0100) + RawATT.le(0x0010) + RawATT.le(0) + RawATT.le(0x0C80), // min > max
                    [0x06, 0x05, 0x04, 0x00] + RawATT.le(0x0040) + RawATT.le(0x0041),  // disconnect a channel that does not exist
                    [0x14, 0x06, 0x0A, 0x00] + RawATT.le(0x0080) + RawATT.le(0x0040) + RawATT.le(23) + RawATT.le(23) + RawATT.le(1),
                    [0x01],                                                      // one octet: not a command
                    [0x12, 0x08, 0x02, 0x00, 0x06, 0x00],                        // a known code with its data cut
                    [0x7F, 0x00, 0x00, 0x00],                                    // identifier 0 is never valid
                    [0x01, 0x0A, 0x02, 0x00, 0x00, 0x00],                        // a Command Reject: never answered
                    [0x13, 0x0B, 0x02, 0x00, 0x00, 0x00],                        // a response to nothing
                    [0x7F, 0x20, 0x00, 0x00],                                    // the last one, answered last
                ]
                try await rig.sendRaw(packets, cid: 5)
                _ = try await rig.waitForL2CAP(cid: 5) { $0.count > 1 && $0[1] == 0x20 }
                let answers = try await rig.recorded(cid: 5)
                let reject: (UInt8) -> [UInt8] = { [0x01, $0, 0x02, 0x00, 0x00, 0x00] }
                #expect(answers == [
                    reject(0x01), reject(0x02), reject(0x03),
                    [0x13, 0x04, 0x02, 0x00, 0x01, 0x00],
                    [0x01, 0x05, 0x06, 0x00, 0x02, 0x00] + RawATT.le(0x0040) + RawATT.le(0x0041),
                    [0x15, 0x06, 0x0A, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00],
                    reject(0x08),
                    reject(0x20),
                ], "\(answers.map { Hex.encode($0) })")
                #expect(connection.parameters == parameters, "the rejected update changed nothing")
                #expect(try await connection.gatt.read(try await connection.gatt.characteristic("180D", "2A38")) == [0x01])
            }
        }

        @Test("Truncated and odd ATT PDUs: typed errors for the requests they answer, dropped or confirmed when pushed, unknown requests refused")
        func oddATTPDUs() async throws {
            var configuration = HostConfiguration()
            configuration.exchangesMTUOnConnect = false
            try await withHostileLink(configuration: configuration) { rig, connection in
                let gatt = connection.gatt
                let location = try await gatt.characteristic("180D", "2A38")
                let measurement = try await gatt.characteristic("180D", "2A37")
                let (received, subscription) = try await gatt.record(measurement)
                defer { subscription.cancel() }
                let handle = location.valueHandle

                try await rig.answer(0x0A, with: [[0x01, 0x0A]])
                await expectProtocolViolation("an Error Response cut short") { _ = try await gatt.readValue(handle: handle) }
                try await rig.answer(0x0A, with: [[0x0B]])
                #expect(try await gatt.readValue(handle: handle) == [], "an empty Read Response is an empty value")
                try await rig.answer(0x0A, with: [RawATT.errorResponse(0x0A, handle: handle, code: 0x00)])
                do {
                    _ = try await gatt.readValue(handle: handle)
                    Issue.record("an Error Response with the reserved code 0 should fail the read")
                } catch let HostError.att(error) {
                    #expect(error.code.rawValue == 0x00)
                }
                try await rig.answer(0x08, with: [[0x09, 0x01, 0x10]])
                await expectProtocolViolation("Read By Type entries shorter than a handle") {
                    _ = try await gatt.readValues(ofType: BluetoothUUID(UInt16(0x2A25)))
                }
                // An Exchange MTU Response below the minimum: the bearer keeps 23.
                try await rig.answer(0x02, with: [[0x03] + RawATT.le(5)])
                #expect(try await gatt.exchangeMTU(517) == 23)
                #expect(gatt.mtu == 23)

                // Pushed PDUs cut short: dropped (an indication still confirmed); unknown
                // requests get Request Not Supported, unknown commands nothing.
                try await rig.record(cid: 4, events: false)
                try await rig.sendRaw([
                    [0x1B, 0x05],
                    [0x1D, 0x05],
                    [0x23] + RawATT.le(measurement.valueHandle) + RawATT.le(5) + [0x01],
                    [0x3F, 0x01],
                    [0x7F, 0x01, 0x02],
                    [0x3E],
                    RawATT.notification(measurement.valueHandle, [0x01, 0x2A, 0x00]),
                ])
                #expect(await received.wait(forCount: 1) == [[0x01, 0x2A, 0x00]])
                let answers = try await rig.waitForRecorded(3, cid: 4)
                #expect(answers == [RawATT.confirmation, RawATT.errorResponse(0x3F, handle: 0, code: 0x06), RawATT.errorResponse(0x3E, handle: 0, code: 0x06)],
                        "\(answers.map { Hex.encode($0) })")
                #expect(try await gatt.read(location) == [0x01])
            }
        }

        @Test("Truncated ACL starts, orphan continuations and overflowing fragments cost only their own PDU")
        func truncatedACLStarts() async throws {
            try await withHostileLink { rig, connection in
                let gatt = connection.gatt
                let measurement = try await gatt.characteristic("180D", "2A37")
                let (received, subscription) = try await gatt.record(measurement)
                defer { subscription.cancel() }
                let handle = RawATT.le(measurement.valueHandle)
                let numbered: (UInt8) -> [UInt8] = { [0x1B] + handle + [0x01, $0, 0x00] }
                try await rig.sendACL([
                    (2, RawATT.le(7) + RawATT.le(4) + [0x1B] + handle),    // a start announcing 7 octets, carrying 3
                    (2, RawATT.frame(numbered(1))),                        // a whole PDU right after it
                    (1, [0xDE, 0xAD, 0xBE, 0xEF, 0x00]),                    // a continuation with no start
                    (2, RawATT.le(2) + RawATT.le(4) + numbered(9)),         // more octets than announced
                    (2, Array(RawATT.frame(numbered(2)).prefix(3))),        // the basic header split over two fragments
                    (1, Array(RawATT.frame(numbered(2)).dropFirst(3))),
                    (2, RawATT.le(0) + RawATT.le(4)),                       // an empty ATT PDU
                    (2, RawATT.frame(numbered(3))),
                ])
                #expect(await received.wait(forCount: 3) == [[0x01, 1, 0], [0x01, 2, 0], [0x01, 3, 0]])
                #expect(try await gatt.read(try await gatt.characteristic("180D", "2A38")) == [0x01])
            }
        }

        // MARK: Support

        static let custom = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        static let longValue = "6E400004-B5A3-F393-E0A9-E50E24DCCA9E"

        /// A rig with the hostile plugin, our host on it, connected to the peripheral; the link
        /// is closed afterwards.
        func withHostileLink(configuration: HostConfiguration = HostConfiguration(),
                             _ body: (BumbleRig, Connection) async throws -> Void) async throws {
            try await withBumbleRig(arguments: Self.hostile) { rig in
                try await withHost(on: rig, configuration: configuration) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    do {
                        try await body(rig, connection)
                    } catch {
                        Issue.record("\(error)\n\(rig.diagnostics)")
                    }
                    if connection.isConnected { try? await connection.disconnect() }
                }
            }
        }
    }
}
