import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Testing

/// Raw SMP PDUs (Core 6.0, Vol 3, Part H, 3.5 and 3.6) as a lying peer sends them.
enum RawSMP {
    /// Pairing Request / Response: NoInputNoOutput, no OOB, `authReq`, 16-octet keys, no keys
    /// distributed.
    static func pairingRequest(authReq: UInt8) -> [UInt8] { [0x01, 0x03, 0x00, authReq, 0x10, 0x00, 0x00] }
    static func pairingResponse(authReq: UInt8) -> [UInt8] { [0x02, 0x03, 0x00, authReq, 0x10, 0x00, 0x00] }
    /// Bonding and Secure Connections; bonding alone is legacy pairing.
    static let secureConnections: UInt8 = 0x09
    static let legacy: UInt8 = 0x01
    static func confirm(_ byte: UInt8) -> [UInt8] { [0x03] + [UInt8](repeating: byte, count: 16) }
    static func random(_ byte: UInt8) -> [UInt8] { [0x04] + [UInt8](repeating: byte, count: 16) }
    static func failed(_ reason: UInt8) -> [UInt8] { [0x05, reason] }
    /// A public key whose point (1, 1) is not on P-256: the invalid-curve attack.
    static let offCurvePublicKey: [UInt8] = [0x0C, 0x01] + [UInt8](repeating: 0, count: 31) + [0x01] + [UInt8](repeating: 0, count: 31)
    static let dhKeyCheck: [UInt8] = [0x0D] + [UInt8](repeating: 0x5A, count: 16)
    static let securityRequest: [UInt8] = [0x0B, secureConnections]
}

/// A user who takes a while to accept a pairing: until the test yields the answer.
struct SlowConsentAgent: PairingAgent {
    let answers: AsyncStream<Bool>

    func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool {
        for await answer in answers { return answer }
        return false
    }
}

extension BumbleRig {
    /// Waits until our host sent an SMP PDU that satisfies `predicate` since the recording was
    /// last cleared; returns it.
    func waitForSMP(timeout: Duration = .seconds(10), _ predicate: ([UInt8]) -> Bool) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let pdu = try await recorded(cid: 6).first(where: predicate) { return pdu }
            guard ContinuousClock.now < deadline else {
                throw RigError(message: "no such SMP PDU within \(timeout)", context: diagnostics)
            }
            // Each poll is a round trip to the Python process: no fixed sleep needed.
        }
    }
}

extension InteropSuites {
    /// A Bumble central whose own Security Manager is muted sends SMP PDUs out of order,
    /// malformed, with a key off the curve, a confirm value that does not match, and in a
    /// flood, to our peripheral. Each gets Pairing Failed with the reason that fits; nothing
    /// crashes or hangs, and the link still serves a GATT read.
    @Suite("Hostile SMP from a Bumble central")
    struct HostileSMPCentralInteropTests {
        static let service = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        static let small = BluetoothUUID("6E400005-B5A3-F393-E0A9-E50E24DCCA9E")

        /// Our peripheral with no back-off (per peer, nor the budget of failures across peers),
        /// so that each case starts a fresh pairing.
        static var noBackoff: HostConfiguration {
            var configuration = HostConfiguration()
            configuration.security = configuration.security.withoutBackoff
            configuration.security.failedPairingBudget = 0
            return configuration
        }

        @Test("Out of order, malformed, off-curve key, confirm mismatch: Pairing Failed with the reason that fits")
        func eachLieGetsItsReason() async throws {
            try await withHostileSMPCentral(configuration: Self.noBackoff) { central, _, small in
                let sc = RawSMP.pairingRequest(authReq: RawSMP.secureConnections)
                let legacy = RawSMP.pairingRequest(authReq: RawSMP.legacy)
                // (what, a Pairing Request answered first or none, the lies, the answer).
                let cases: [(String, [UInt8]?, [[UInt8]], [UInt8])] = [
                    ("a Pairing Random with no pairing", nil, [RawSMP.random(1)], RawSMP.failed(0x08)),
                    ("a DHKey Check before the public keys", sc, [RawSMP.dhKeyCheck], RawSMP.failed(0x08)),
                    ("a second Pairing Request mid-pairing", sc, [sc], RawSMP.failed(0x08)),
                    ("a Pairing Request one octet short", nil, [Array(sc.dropLast())], RawSMP.failed(0x0A)),
                    ("a Pairing Request one octet long", nil, [sc + [0]], RawSMP.failed(0x0A)),
                    ("a Pairing Request of the code alone", nil, [[0x01]], RawSMP.failed(0x0A)),
                    ("a public key one octet long, mid-pairing", sc, [RawSMP.offCurvePublicKey + [0]], RawSMP.failed(0x0A)),
                    ("a public key one octet short, mid-pairing", sc, [Array(RawSMP.offCurvePublicKey.dropLast())], RawSMP.failed(0x0A)),
                    ("a public key off the curve", sc, [RawSMP.offCurvePublicKey], RawSMP.failed(0x0B)),
                    ("a legacy confirm value that does not match", legacy, [RawSMP.confirm(0x11), RawSMP.random(0x22)], RawSMP.failed(0x04)),
                ]
                for (what, request, pdus, expected) in cases {
                    _ = try await central.recorded(cid: 6, clear: true)
                    if let request {
                        // An honest start: the lies come once our peripheral answered.
                        try await central.sendRaw([request], cid: 6)
                        let response = try await central.waitForSMP { $0.first == 0x02 || $0.first == 0x05 }
                        #expect(response.first == 0x02 && response.count == 7, "\(what): \(Hex.encode(response))")
                    }
                    try await central.sendRaw(pdus, cid: 6)
                    let failed = try await central.waitForSMP { $0.first == 0x05 }
                    #expect(failed == expected, "\(what): \(Hex.encode(failed))")
                    let sent = try await central.recorded(cid: 6)
                    #expect(sent.filter { $0.first == 0x05 }.count == 1, "\(what): one Pairing Failed, got \(sent.map { Hex.encode($0) })")
                    #expect(try await central.exchange(RawATT.readRequest(small)) == RawATT.readResponse([0x2A]), "\(what): the link serves")
                }
            }
        }

        @Test("A Pairing Request right after a failure gets Repeated Attempts; a flood of them is answered and nothing more")
        func repeatedAttemptsAndFlood() async throws {
            try await withHostileSMPCentral(configuration: HostConfiguration()) { central, _, small in
                let sc = RawSMP.pairingRequest(authReq: RawSMP.secureConnections)
                #expect(try await central.exchange(sc, cid: 6)?.first == 0x02)
                try await central.sendRaw([RawSMP.offCurvePublicKey], cid: 6)
                #expect(try await central.waitForSMP { $0.first == 0x05 } == RawSMP.failed(0x0B))
                #expect(try await central.exchange(sc, cid: 6) == RawSMP.failed(0x09), "within the back-off (Part H, 2.3.6)")

                _ = try await central.recorded(cid: 6, clear: true)
                let count = 100
                try await central.sendRaw([sc], cid: 6, count: count)
                let answers = try await central.waitForRecorded(count, cid: 6, timeout: .seconds(20))
                #expect(answers.count == count, "one answer per request")
                #expect(answers.allSatisfy { $0 == RawSMP.failed(0x09) }, "\(Set(answers.map { Hex.encode($0) }))")
                #expect(try await central.exchange(RawATT.readRequest(small)) == RawATT.readResponse([0x2A]))
            }
        }

        @Test("A flood of Pairing Requests with no back-off: never two pairings, never a response before the first is accepted")
        func floodWithoutBackoff() async throws {
            try await withHostileSMPCentral(configuration: Self.noBackoff) { central, _, small in
                let count = 50
                try await central.sendRaw([RawSMP.pairingRequest(authReq: RawSMP.secureConnections)], cid: 6, count: count)
                // A request while the first awaits the user's consent, or mid-pairing, fails that
                // pairing (Unspecified Reason); the next starts a new one. So at least every
                // second request is answered, only by a Pairing Response or that failure, and
                // never two Pairing Responses without a failure between them.
                let answers = try await central.waitForRecorded(count / 2, cid: 6, timeout: .seconds(20))
                #expect(answers.allSatisfy { $0.first == 0x02 || $0 == RawSMP.failed(0x08) }, "\(Set(answers.map { Hex.encode($0) }))")
                #expect(!zip(answers, answers.dropFirst()).contains { $0.first == 0x02 && $1.first == 0x02 }, "two pairings at once")
                #expect(try await central.exchange(RawATT.readRequest(small)) == RawATT.readResponse([0x2A]))
            }
        }

        @Test("A Pairing Request while the user is asked about the first fails the pairing; it is never answered in the first's place")
        func requestDuringConsent() async throws {
            try await withHostileSMPCentral(configuration: Self.noBackoff) { central, manager, small in
                let (answers, consent) = AsyncStream.makeStream(of: Bool.self)
                await manager.setPairingAgent(SlowConsentAgent(answers: answers))
                let sc = RawSMP.pairingRequest(authReq: RawSMP.secureConnections)
                try await central.sendRaw([sc, sc], cid: 6)
                #expect(try await central.waitForSMP { _ in true } == RawSMP.failed(0x08))
                consent.yield(true)
                consent.finish()
                // The consent came too late: the failed pairing stays failed.
                #expect(try await central.exchange(RawATT.readRequest(small)) == RawATT.readResponse([0x2A]))
                #expect(try await central.recorded(cid: 6) == [RawSMP.failed(0x08)])
            }
        }

        /// The Bumble central with the hostile plugin and its Security Manager muted, our
        /// manager advertising a readable characteristic, connected; always stops both.
        private func withHostileSMPCentral(configuration: HostConfiguration, _ body: (BumbleRig, PeripheralManager, UInt16) async throws -> Void) async throws {
            try await using(try BumbleRig.start(script: .central, arguments: ["--plugin", "bluejay_hostile"])) { central in
                try await central.waitForReady()
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification), configuration: configuration)
                do {
                    try await manager.powerOn()
                    let published = try await manager.add(PeripheralService(uuid: Self.service, characteristics: [
                        PeripheralCharacteristic(uuid: Self.small, properties: [.read], value: [0x2A]),
                    ]))
                    let small = try #require(published.characteristic(Self.small))
                    try await manager.startAdvertising(name: "Bluejay Hostile SMP")
                    try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    try await central.hostile("mute_smp")
                    try await central.record(cid: 6, events: false)
                    try await body(central, manager, small.valueHandle)
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }
    }

    /// A Bumble peripheral whose own Security Manager is muted asks our central for security,
    /// then answers its Pairing Request with lies: a public key off the curve, a confirm value
    /// that does not match, PDUs out of order and malformed.
    @Suite("Hostile SMP from a Bumble peripheral")
    struct HostileSMPPeripheralInteropTests {
        @Test("Our central's pairing, started by a Security Request, fails with the reason that fits; the link still serves")
        func centralPairingAgainstLies() async throws {
            try await withBumbleRig(arguments: ["--plugin", "bluejay_hostile"]) { rig in
                // No back-off and no Security Request rate limit: each case is a new pairing,
                // started by a Security Request right after the last case's failure.
                var configuration = HostConfiguration()
                configuration.security = configuration.security.withoutBackoff
                configuration.security.securityRequestInterval = .zero
                try await withHost(on: rig, configuration: configuration) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    do {
                        try await rig.hostile("mute_smp")
                        try await rig.record(cid: 6, events: false)
                        let sc = RawSMP.pairingResponse(authReq: RawSMP.secureConnections)
                        let cases: [(String, [[UInt8]], [UInt8])] = [
                            ("a public key off the curve", [sc, RawSMP.offCurvePublicKey], RawSMP.failed(0x0B)),
                            ("a public key one octet short", [sc, Array(RawSMP.offCurvePublicKey.dropLast())], RawSMP.failed(0x0A)),
                            ("a Pairing Random instead of the public key", [sc, RawSMP.random(3)], RawSMP.failed(0x08)),
                            ("a legacy confirm value that does not match", [RawSMP.pairingResponse(authReq: RawSMP.legacy),
                                                                           RawSMP.confirm(0x11), RawSMP.random(0x22)], RawSMP.failed(0x04)),
                        ]
                        for (what, pdus, expected) in cases {
                            _ = try await rig.recorded(cid: 6, clear: true)
                            try await rig.sendRaw([RawSMP.securityRequest], cid: 6)
                            let request = try await rig.waitForSMP { $0.first == 0x01 }
                            #expect(request.count == 7, "\(what): our Pairing Request \(Hex.encode(request))")
                            // The legacy confirm case: our central sends its Mconfirm before the
                            // lie's Sconfirm (Part H, 2.3.5.5); the PDUs go out in order anyway.
                            try await rig.sendRaw(pdus, cid: 6)
                            let failed = try await rig.waitForSMP { $0.first == 0x05 }
                            #expect(failed == expected, "\(what): \(Hex.encode(failed))")
                            #expect(connection.isConnected, "\(what)")
                            #expect(!connection.security.isEncrypted)
                            #expect(try await connection.gatt.read(try await connection.gatt.characteristic("2A38", inService: "180D")) == [0x01],
                                    "\(what): the link serves")
                        }
                    } catch {
                        Issue.record("\(error)\n\(rig.diagnostics)")
                    }
                    if connection.isConnected { try? await connection.disconnect() }
                }
            }
        }
    }
}
