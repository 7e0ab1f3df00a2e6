import BluetoothHCI
import BluetoothTransport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension InteropSuites {
    /// These prove the Bumble rig itself, packet by packet below the HCI layer: the controller
    /// answers, a new host connection gets a working controller, and the peer's advertising
    /// (with its real scan response) reaches the host. The protocol tests are elsewhere.
    @Suite("Bumble rig smoke tests")
    struct RigSmokeTests {
        @Test("HCI Reset over the rig's TCP transport gets Command Complete with status 0")
        func resetIsAnswered() async throws {
            try await withBumbleRig { rig in
                let probe = try HCIProbe(rig.transportSpecification)
                defer { probe.close() }
                try await expectReset(on: probe, rig: rig)
            }
        }

        @Test("A host that reconnects gets a fresh controller")
        func reconnectingHostGetsAController() async throws {
            try await withBumbleRig { rig in
                let first = try HCIProbe(rig.transportSpecification)
                try await rig.waitForEvent(named: "host_connected")
                try await expectReset(on: first, rig: rig)
                first.close()
                try await rig.waitForEvent(named: "host_disconnected")

                let second = try HCIProbe(rig.transportSpecification)
                defer { second.close() }
                try await rig.waitForEvent(named: "host_connected")
                try await expectReset(on: second, rig: rig)
            }
        }

        @Test("The peer's advertising and scan response reach the host")
        func advertisingReachesTheHost() async throws {
            try await withBumbleRig { rig in
                let probe = try HCIProbe(rig.transportSpecification)
                defer { probe.close() }
                try await expectReset(on: probe, rig: rig)

                // LE Set Scan Parameters (Core 6.0, Vol 4, Part E, 7.8.10): opcode 0x200B (OGF 0x08,
                // OCF 0x000B) little-endian, 7 parameter octets: LE_Scan_Type 0x01 (active),
                // LE_Scan_Interval 0x0010 and LE_Scan_Window 0x0010 (10 ms), Own_Address_Type 0x00
                // (public), Scanning_Filter_Policy 0x00 (accept all).
                try probe.send(.command, [0x0B, 0x20, 0x07, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
                try await expectCommandComplete(0x200B, on: probe, rig: rig)
                // LE Set Scan Enable (7.8.11): opcode 0x200C, 2 octets: LE_Scan_Enable 0x01,
                // Filter_Duplicates 0x00.
                try probe.send(.command, [0x0C, 0x20, 0x02, 0x01, 0x00])
                try await expectCommandComplete(0x200C, on: probe, rig: rig)

                let peer = try #require(RawAdvertisingReport.addressBytes(rig.peerAddress), "bad peer address \(rig.peerAddress)")
                let advertising = try await probe.waitForReport(timeout: .seconds(5)) { $0.address == peer && $0.eventType == 0x00 }
                let report = try #require(advertising, "no ADV_IND report from \(rig.peerAddress)\n\(rig.diagnostics)")
                #expect(report.addressType == 0x01, "the peer advertises with its random static address")
                // Manufacturer Specific Data: length 7, type 0xFF, company 0xFFFF, then 01 02 03 04.
                #expect(report.data.contains([0x07, 0xFF, 0xFF, 0xFF, 0x01, 0x02, 0x03, 0x04]), "advertising data \(report.data)")
                #expect(report.rssi == -50)

                // Unlike stock Bumble, the rig answers an active scan with the real scan response.
                let response = try await probe.waitForReport(timeout: .seconds(5)) { $0.address == peer && $0.eventType == 0x04 }
                let scanResponse = try #require(response, "no SCAN_RSP report from \(rig.peerAddress)\n\(rig.diagnostics)")
                let name = Array("Bluejay Peer".utf8)
                #expect(scanResponse.data.contains([UInt8(name.count + 1), 0x09] + name), "scan response \(scanResponse.data)")

                try probe.send(.command, [0x0C, 0x20, 0x02, 0x00, 0x00])
                try await expectCommandComplete(0x200C, on: probe, rig: rig)
            }
        }

        @Test("The peer answers commands, and failures name its log")
        func controlProtocol() async throws {
            try await withBumbleRig(peripherals: 2) { rig in
                #expect(rig.peripherals.map(\.serial) == ["SN-0001", "SN-0002"])
                #expect(rig.peripherals.map(\.name) == ["Bluejay Peer 1", "Bluejay Peer 2"])
                #expect(rig.peerAddress == rig.peripherals.first?.address)

                let status = try await rig.request(.status(peripheral: 2))
                #expect(status.bool("advertising") == true)
                #expect(status["services"]?.arrayValue?.compactMap(\.stringValue).contains(RigUUID.customService) == true)

                do {
                    try await rig.request(RigCommand("no_such_command"))
                    Issue.record("an unknown command was acknowledged")
                } catch let error as RigError {
                    #expect(error.description.contains(rig.logPath))
                }
                do {
                    try await rig.waitForEvent(named: "never_sent", timeout: .milliseconds(200))
                    Issue.record("an event that is never sent arrived")
                } catch let error as RigError {
                    #expect(error.description.contains("rig log: \(rig.logPath)"))
                }
            }
        }

        @Test("Stopping the rig leaves no Python process")
        func stopEndsThePeer() async throws {
            try await using(try BumbleRig.start()) { rig in
                try await rig.waitForReady()
                let pid = try #require(rig.processIdentifier)
                await rig.shutdown()
                #expect(rig.processIdentifier == nil)
                #expect(kill(pid, 0) == -1 && errno == ESRCH, "process \(pid) still exists")
            }
        }

        private func expectReset(on probe: HCIProbe, rig: BumbleRig) async throws {
            try probe.send(.command, ResetCommand().encode())
            try await expectCommandComplete(ResetCommand.opcode.rawValue, on: probe, rig: rig)
        }

        private func expectCommandComplete(_ opcode: UInt16, on probe: HCIProbe, rig: BumbleRig) async throws {
            let packet = try await probe.waitForPacket { packet in
                guard packet.indicator == .event, case let .commandComplete(event)? = try? HCIEvent.decode(packet.bytes) else { return false }
                return event.opcode.rawValue == opcode
            }
            let found = try #require(packet, "no Command Complete for opcode 0x\(String(opcode, radix: 16)); received \(probe.received)\n\(rig.diagnostics)")
            guard case let .commandComplete(event) = try HCIEvent.decode(found.bytes) else { return }
            #expect(event.status == .success, "\(event)")
        }
    }
}

/// One report of an LE Advertising Report event, decoded by hand so that this smoke test
/// depends on nothing but the bytes (Core 6.0, Vol 4, Part E, 7.7.65.2).
struct RawAdvertisingReport: Equatable {
    var eventType: UInt8
    var addressType: UInt8
    /// Most significant byte first, as the address is written.
    var address: [UInt8]
    var data: [UInt8]
    var rssi: Int8

    /// `"F0:00:00:00:00:01"` as bytes, most significant first.
    static func addressBytes(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        return parts.count == 6 ? parts : nil
    }

    /// Decodes the reports of an H4 event packet if it is an LE Advertising Report; the
    /// parameters are arrays field by field: Event_Type[n], Address_Type[n], Address[n],
    /// Data_Length[n], Data[n], RSSI[n].
    static func decode(_ packet: H4Packet) -> [RawAdvertisingReport]? {
        let bytes = Array(packet.bytes)
        guard packet.indicator == .event, bytes.count >= 4, bytes[0] == 0x3E, bytes[2] == 0x02 else { return nil }
        let count = Int(bytes[3])
        var offset = 4
        func take(_ length: Int) -> ArraySlice<UInt8>? {
            guard offset + length <= bytes.count else { return nil }
            defer { offset += length }
            return bytes[offset..<(offset + length)]
        }
        guard let types = take(count), let addressTypes = take(count), let addresses = take(6 * count),
              let lengths = take(count) else { return nil }
        var data: [[UInt8]] = []
        for length in lengths {
            guard let slice = take(Int(length)) else { return nil }
            data.append(Array(slice))
        }
        guard let rssis = take(count), offset == bytes.count else { return nil }
        return (0..<count).map { index in
            let address = addresses.dropFirst(6 * index).prefix(6)
            return RawAdvertisingReport(
                eventType: types[types.startIndex + index],
                addressType: addressTypes[addressTypes.startIndex + index],
                address: address.reversed(),
                data: data[index],
                rssi: Int8(bitPattern: rssis[rssis.startIndex + index])
            )
        }
    }
}

extension HCIProbe {
    /// Waits for an LE Advertising Report event holding a report that `predicate` accepts.
    func waitForReport(timeout: Duration, where predicate: @escaping (RawAdvertisingReport) -> Bool) async throws -> RawAdvertisingReport? {
        let packet = try await waitForPacket(timeout: timeout) { packet in
            RawAdvertisingReport.decode(packet)?.contains(where: predicate) ?? false
        }
        return packet.flatMap(RawAdvertisingReport.decode)?.first(where: predicate)
    }
}

extension Array where Element: Equatable {
    /// Whether `sequence` occurs in this array as consecutive elements.
    func contains(_ sequence: [Element]) -> Bool {
        guard !sequence.isEmpty, sequence.count <= count else { return sequence.isEmpty }
        return (0...(count - sequence.count)).contains { Array(self[$0..<($0 + sequence.count)]) == sequence }
    }
}
