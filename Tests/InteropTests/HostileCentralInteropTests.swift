import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Testing

extension InteropSuites {
    /// A Bumble central that lies to our GATT server (`bumble/central.py --plugin
    /// bluejay_hostile`): raw requests with impossible handles, oversized writes, floods of
    /// prepared writes and of requests, unknown opcodes, malformed signalling. The server
    /// answers each with the specification's error (or, for commands, nothing) and serves the
    /// next honest request.
    @Suite("Hostile Bumble central against our GATT server")
    struct HostileCentralInteropTests {
        static let service = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        static let blob = BluetoothUUID("6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
        static let small = BluetoothUUID("6E400005-B5A3-F393-E0A9-E50E24DCCA9E")
        static let blobValue: [UInt8] = (0..<400).map { UInt8(($0 * 7) % 256) }

        /// What the tests need to know of the published database.
        struct Database {
            var blobCharacteristic: GATTPublishedCharacteristic
            var smallCharacteristic: GATTPublishedCharacteristic
            var blob: UInt16 { blobCharacteristic.valueHandle }
            var small: UInt16 { smallCharacteristic.valueHandle }
        }

        @Test("Requests with zero or out-of-range handles get Invalid Handle (or the error the request calls for) naming the handle")
        func impossibleHandles() async throws {
            try await withHostileCentral { central, manager, database in
                let blob = database.blob
                let cases: [(String, [UInt8], [UInt8])] = [
                    ("Read of handle 0", RawATT.readRequest(0), RawATT.errorResponse(0x0A, handle: 0, code: 0x01)),
                    ("Read of handle 0xFFFF", RawATT.readRequest(0xFFFF), RawATT.errorResponse(0x0A, handle: 0xFFFF, code: 0x01)),
                    ("Read Blob of handle 0", [0x0C] + RawATT.le(0) + RawATT.le(0), RawATT.errorResponse(0x0C, handle: 0, code: 0x01)),
                    ("Write of handle 0", [0x12] + RawATT.le(0) + [1], RawATT.errorResponse(0x12, handle: 0, code: 0x01)),
                    ("Prepare Write of handle 0", [0x16] + RawATT.le(0) + RawATT.le(0) + [1], RawATT.errorResponse(0x16, handle: 0, code: 0x01)),
                    ("Find Information from 0", [0x04] + RawATT.le(0) + RawATT.le(0xFFFF), RawATT.errorResponse(0x04, handle: 0, code: 0x01)),
                    ("Find Information with start > end", [0x04] + RawATT.le(0x0010) + RawATT.le(0x0005),
                     RawATT.errorResponse(0x04, handle: 0x0010, code: 0x01)),
                    ("Read By Type from 0", [0x08] + RawATT.le(0) + RawATT.le(0xFFFF) + RawATT.le(0x2803),
                     RawATT.errorResponse(0x08, handle: 0, code: 0x01)),
                    ("Read By Type past the database", [0x08] + RawATT.le(0xFF00) + RawATT.le(0xFFFF) + RawATT.le(0x2803),
                     RawATT.errorResponse(0x08, handle: 0xFF00, code: 0x0A)),
                    ("Read By Group Type of characteristics", [0x10] + RawATT.le(1) + RawATT.le(0xFFFF) + RawATT.le(0x2803),
                     RawATT.errorResponse(0x10, handle: 1, code: 0x10)),
                    ("Find By Type Value from 0", [0x06] + RawATT.le(0) + RawATT.le(0xFFFF) + RawATT.le(0x2800) + RawATT.le(0x180D),
                     RawATT.errorResponse(0x06, handle: 0, code: 0x01)),
                    ("Read Multiple with handle 0", [0x0E] + RawATT.le(blob) + RawATT.le(0), RawATT.errorResponse(0x0E, handle: 0, code: 0x01)),
                ]
                for (what, request, expected) in cases {
                    let answer = try await central.exchange(request)
                    #expect(answer == expected, "\(what): \(answer.map { Hex.encode($0) } ?? "no answer")")
                }
                #expect(try await central.exchange(RawATT.readRequest(database.small)) == RawATT.readResponse([0x2A]))
                _ = manager
            }
        }

        @Test("Oversized writes: longer than the characteristic allows is refused, prepared writes past the end and past 512 octets too")
        func oversizedWrites() async throws {
            try await withHostileCentral { central, manager, database in
                let small = database.small
                let blob = database.blob
                // A Write Request of 603 octets at MTU 23: longer than the MTU, Invalid PDU
                // (Core 6.0, Vol 3, Part F, 3.2.8).
                let overMTU = try await central.exchange([0x12] + RawATT.le(small) + Array(repeating: 0x77, count: 600))
                #expect(overMTU == RawATT.errorResponse(0x12, handle: 0, code: 0x04), "\(overMTU.map { Hex.encode($0) } ?? "none")")
                // Within the MTU, but longer than the characteristic's 1 octet.
                let tooLong = try await central.exchange([0x12] + RawATT.le(small) + [0x77, 0x77])
                #expect(tooLong == RawATT.errorResponse(0x12, handle: small, code: 0x0D), "\(tooLong.map { Hex.encode($0) } ?? "none")")
                // Prepared writes that end past the characteristic's maximum (512): refused at execution.
                for offset in stride(from: 0, to: 600, by: 18) {
                    let part = Array(repeating: UInt8(0x33), count: min(18, 600 - offset))
                    let echo = try await central.exchange([0x16] + RawATT.le(blob) + RawATT.le(UInt16(offset)) + part)
                    #expect(echo?.first == 0x17, "prepare at \(offset): \(echo.map { Hex.encode($0) } ?? "none")")
                }
                let executed = try await central.exchange([0x18, 0x01])
                #expect(executed?.first == 0x01 && executed?.last == 0x0D, "\(executed.map { Hex.encode($0) } ?? "none")")
                // A prepared write that starts past the value's end: Invalid Offset.
                _ = try await central.exchange([0x16] + RawATT.le(small) + RawATT.le(0x0300) + [1])
                let pastEnd = try await central.exchange([0x18, 0x01])
                #expect(pastEnd == RawATT.errorResponse(0x18, handle: small, code: 0x07), "\(pastEnd.map { Hex.encode($0) } ?? "none")")
                // Nothing was written.
                #expect(await manager.value(of: database.blobCharacteristic) == Self.blobValue)
                #expect(try await central.exchange(RawATT.readRequest(small)) == RawATT.readResponse([0x2A]))
            }
        }

        @Test("A prepare-write flood: the queue's limit, then Prepare Queue Full for each extra; cancelling empties it")
        func prepareWriteFlood() async throws {
            try await withHostileCentral { central, manager, database in
                let limit = GATTServerSettings().maximumPreparedWrites
                let total = limit + 40
                try await central.record(cid: 4, events: false)
                let prepares = (0..<total).map { index in [0x16] + RawATT.le(database.blob) + RawATT.le(UInt16(index)) + [UInt8(index % 256)] }
                let droppedBefore = manager.backend.server.droppedPDUCount
                let sent = try await central.sendRaw(prepares)
                #expect(sent == total, "the peer sent \(sent) of \(total)")
                // Sent back to back, they may outrun the server: past its inbound limit it drops
                // and counts them (GATTServerSettings.maximumQueuedPDUs). Each is answered or counted.
                let answers = try await Self.answersOrDrops(sent, droppedBefore: droppedBefore, central: central, manager: manager)
                let queued = min(limit, answers.count)
                #expect(answers.prefix(queued).allSatisfy { $0.first == 0x17 }, "the first \(queued) taken are queued and echoed")
                let echoed = answers.prefix(queued).map { [0x16] + $0.dropFirst() }
                let offsets = echoed.map { Int($0[3]) | Int($0[4]) << 8 }
                #expect(echoed.allSatisfy { prepares.contains($0) } && offsets == offsets.sorted(), "echoes of what was sent, in order")
                #expect(answers.dropFirst(queued).allSatisfy { $0 == RawATT.errorResponse(0x16, handle: database.blob, code: 0x09) },
                        "the rest: Prepare Queue Full")
                #expect(try await central.exchange([0x18, 0x00]) == [0x19])
                #expect(await manager.value(of: database.blobCharacteristic) == Self.blobValue, "cancelled: nothing written")
                // The queue is empty again: a new prepared write is taken.
                #expect(try await central.exchange([0x16] + RawATT.le(database.blob) + RawATT.le(0) + [9])?.first == 0x17)
                #expect(try await central.exchange([0x18, 0x00]) == [0x19])
            }
        }

        @Test("Unknown requests get Request Not Supported, malformed ones Invalid PDU; unknown commands, signed writes, stray responses and confirmations get nothing")
        func unknownOpcodes() async throws {
            try await withHostileCentral { central, _, database in
                try await central.record(cid: 4, events: false)
                try await central.sendRaw([
                    [0x3F, 0x01, 0x02],                               // an unknown request
                    [0x7F, 0x01, 0x02],                               // an unknown command (bit 6)
                    [0xD2] + RawATT.le(database.small) + [1] + Array(repeating: 0, count: 12), // Signed Write Command
                    [0x52] + RawATT.le(database.small) + [2],          // Write Command to a read-only value
                    RawATT.readResponse([1, 2, 3]),                    // a response, to a client that asked nothing
                    RawATT.confirmation,                               // a confirmation of no indication
                    [0x3E],                                            // another unknown request, answered last
                ])
                let answers = try await central.waitForRecorded(2, cid: 4)
                #expect(answers == [RawATT.errorResponse(0x3F, handle: 0, code: 0x06), RawATT.errorResponse(0x3E, handle: 0, code: 0x06)],
                        "\(answers.map { Hex.encode($0) })")
                #expect(try await central.exchange(RawATT.readRequest(database.small)) == RawATT.readResponse([0x2A]), "the value was not written")
                // Known requests of the wrong length: Invalid PDU.
                let cut = try await central.exchange([0x0A, 0x01])
                #expect(cut == RawATT.errorResponse(0x0A, handle: 0, code: 0x04), "\(cut.map { Hex.encode($0) } ?? "none")")
                let padded = try await central.exchange(RawATT.readRequest(database.small) + [0xEE, 0xEE])
                #expect(padded == RawATT.errorResponse(0x0A, handle: 0, code: 0x04), "\(padded.map { Hex.encode($0) } ?? "none")")
                let empty = try await central.exchange([0x10])
                #expect(empty == RawATT.errorResponse(0x10, handle: 0, code: 0x04), "\(empty.map { Hex.encode($0) } ?? "none")")
            }
        }

        @Test("A flood of requests sent without waiting for answers: each is answered in order, or dropped and counted only past the server's limit, and the server still serves",
              arguments: [false, true])
        func requestFlood(injected: Bool) async throws {
            try await withHostileCentral { central, manager, database in
                let count = 300
                try await central.record(cid: 4, events: false)
                let droppedBefore = manager.backend.server.droppedPDUCount
                // Through Bumble's host and controller (paced by the link), or handed to our host as
                // fast as Python can, which outruns the server.
                let sent = try await central.sendRaw([RawATT.readRequest(database.small)], count: count, inject: injected)
                #expect(sent == count, "the peer sent \(sent) of \(count)")
                let answers = try await Self.answersOrDrops(sent, droppedBefore: droppedBefore, central: central, manager: manager)
                #expect(answers.allSatisfy { $0 == RawATT.readResponse([0x2A]) })
                #expect(try await central.exchange(RawATT.readRequest(database.blob))?.count == 23, "a value cut to the MTU")
            }
        }

        @Test("A central's malformed signalling and connection parameter update request are refused; the server still serves")
        func centralSignalling() async throws {
            try await withHostileCentral { central, _, database in
                let update: [UInt8] = [0x12, 0x07, 0x08, 0x00] + RawATT.le(24) + RawATT.le(40) + RawATT.le(0) + RawATT.le(500)
                // Only the central answers this request (Core 6.0, Vol 3, Part A, 4.20): we are the peripheral.
                let refused = try await central.exchange(update, cid: 5)
                #expect(refused == [0x01, 0x07, 0x02, 0x00, 0x00, 0x00])
                let cut = try await central.exchange([0x12, 0x08, 0x09, 0x00, 0x01], cid: 5)
                #expect(cut == [0x01, 0x08, 0x02, 0x00, 0x00, 0x00])
                // An Exchange MTU Request below the minimum: the bearer keeps 23.
                let exchanged = try await central.exchange([0x02] + RawATT.le(5))
                #expect(exchanged == [0x03] + RawATT.le(517))
                let read = try await central.exchange(RawATT.readRequest(database.blob))
                #expect(read?.count == 23)
            }
        }

        @Test("A central's truncated ACL start costs only that PDU: the whole request right after it is answered")
        func truncatedACLStart() async throws {
            try await withHostileCentral { central, _, database in
                try await central.record(cid: 4, events: false)
                let read = RawATT.readRequest(database.small)
                try await central.sendACL([
                    (2, RawATT.le(20) + RawATT.le(4) + [0x12] + RawATT.le(database.small)),  // announces 20 octets, carries 3
                    (2, RawATT.frame(read)),
                    (1, [0x00, 0x01, 0x02]),                                             // a continuation of nothing
                    (2, RawATT.frame(read)),
                ])
                let answers = try await central.waitForRecorded(2, cid: 4)
                #expect(answers == [RawATT.readResponse([0x2A]), RawATT.readResponse([0x2A])], "\(answers.map { Hex.encode($0) })")
            }
        }

        // MARK: Support

        /// Waits until each of the `sent` requests is answered (recorded on the ATT channel) or
        /// dropped by the server (``GATTServer/droppedPDUCount``, counted from `droppedBefore`);
        /// returns the answers. The counts must add up: answers + drops = requests sent. And the
        /// server drops only past its documented bound (``GATTServerSettings/maximumQueuedPDUs``):
        /// it drops a PDU only while that many of the link's wait, each of which it then answers,
        /// so at least that many (or every request, when fewer were sent) are answered.
        static func answersOrDrops(_ sent: Int, droppedBefore: Int, central: BumbleRig, manager: PeripheralManager,
                                   timeout: Duration = .seconds(20)) async throws -> [[UInt8]] {
            let server = manager.backend.server
            let bound = GATTServerSettings().maximumQueuedPDUs
            let deadline = ContinuousClock.now + timeout
            while true {
                let answers = try await central.recorded(cid: 4)
                let dropped = server.droppedPDUCount - droppedBefore
                if answers.count + dropped >= sent {
                    let counts = "\(sent) requests sent, \(answers.count) answered, \(dropped) dropped (bound \(bound))"
                    #expect(answers.count + dropped == sent, "the counts do not add up: \(counts)")
                    #expect(answers.count >= min(sent, bound), "the server dropped requests within its bound: \(counts)")
                    return answers
                }
                guard ContinuousClock.now < deadline else {
                    throw RigError(message: "\(answers.count) answered and \(dropped) dropped of \(sent) within \(timeout)", context: central.diagnostics)
                }
                // Each poll is a round trip to the Python process: no fixed sleep needed.
            }
        }

        static var definition: PeripheralService {
            PeripheralService(uuid: service, characteristics: [
                PeripheralCharacteristic(uuid: blob, properties: [.read, .write], value: blobValue),
                PeripheralCharacteristic(uuid: small, properties: [.read, .write], value: [0x2A], maximumValueLength: 1),
            ])
        }

        /// The Bumble central with the hostile plugin, our manager advertising the test service,
        /// and the central connected to it; always stops both.
        private func withHostileCentral(_ body: (BumbleRig, PeripheralManager, Database) async throws -> Void) async throws {
            try await using(try BumbleRig.start(script: .central, arguments: ["--plugin", "bluejay_hostile"])) { central in
                try await central.waitForReady()
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification))
                do {
                    try await manager.powerOn()
                    let published = try await manager.add(Self.definition)
                    let blob = try #require(published.characteristic(Self.blob))
                    let small = try #require(published.characteristic(Self.small))
                    try await manager.startAdvertising(name: "Bluejay Hostile")
                    try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    try await body(central, manager, Database(blobCharacteristic: blob, smallCharacteristic: small))
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }
    }
}
