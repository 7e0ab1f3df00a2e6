import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Synchronization
import Testing

extension InteropSuites {
    /// Our peripheral role's Security Manager against a Bumble central: the central pairs (our
    /// host answers as responder), protected characteristics refuse and then serve, and a
    /// bonded central re-encrypts with the key our host stored (that one also on Rootcanal).
    @Suite("Pairing with our peripheral and a Bumble central", .sharedRootcanal)
    struct PeripheralPairingInteropTests {
        static let service = BluetoothUUID("6E400501-B5A3-F393-E0A9-E50E24DCCA9E")
        static let secret = BluetoothUUID("6E400502-B5A3-F393-E0A9-E50E24DCCA9E")
        static let guarded = BluetoothUUID("6E400503-B5A3-F393-E0A9-E50E24DCCA9E")
        /// Notifies values whose reads need encryption.
        static let feed = BluetoothUUID("6E400504-B5A3-F393-E0A9-E50E24DCCA9E")
        /// Notifies values anyone may have: sent after the others, it shows they all arrived.
        static let marker = BluetoothUUID("6E400505-B5A3-F393-E0A9-E50E24DCCA9E")

        static let protectedService = PeripheralService(uuid: service, characteristics: [
            PeripheralCharacteristic(uuid: secret, properties: [.read], readSecurity: .encryption, value: Array("secret".utf8)),
            PeripheralCharacteristic(uuid: guarded, properties: [.read], readSecurity: [.authentication, .key128],
                                     value: Array("guarded".utf8)),
        ])

        @Test("Just Works: refused before pairing, served after; the bond re-encrypts the next connection",
              arguments: InteropController.allCases)
        func justWorksAndReencryption(on controller: InteropController) async throws {
            try await withPairingPeripheral(SecurityManagerSettings(), controller: controller) { central, manager in
                let published = try await manager.add(Self.protectedService)
                let secret = try #require(published.characteristic(Self.secret)).valueHandle
                let address = try await #require(manager.host).publicAddressText
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": address, "address_type": "public"])
                // No key for this central yet: Insufficient Authentication (Core 6.0, Vol 3, Part C, 10.3.1).
                #expect(try await central.request("read", ["handle": Int(secret)]).int("att_error") == 0x05)

                let paired = try await central.request("initiate")
                #expect(paired.bool("paired") == true, "\(paired)")
                #expect(try await central.request("read", ["handle": Int(secret)]).bytes("value") == Array("secret".utf8))
                let bonds = await manager.bonds()
                #expect(bonds.count == 1 && bonds.first?.isSecureConnections == true)
                #expect(bonds.first?.localKeys.longTermKey != nil)

                // Next connection: the central encrypts with the stored key, our host answers the
                // LTK request from its bond store, no pairing.
                _ = try await central.request("disconnect")
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": address, "address_type": "public"])
                // Bonded but not yet encrypted: Insufficient Encryption tells the central to encrypt.
                #expect(try await central.request("read", ["handle": Int(secret)]).int("att_error") == 0x0F)
                let encrypted = try await central.request("encrypt")
                #expect(encrypted.bool("encrypted") == true, "\(encrypted)")
                #expect(try await central.request("read", ["handle": Int(secret)]).bytes("value") == Array("secret".utf8))
                #expect(central.receivedEvents.filter { $0.name == "pairing_done" }.count == 1)
                _ = try await central.request("disconnect")
            }
        }

        @Test("Passkey Entry with our peripheral displaying: the central types it; the authenticated characteristic reads")
        func passkeyWeDisplay() async throws {
            let agent = ScriptedPairingAgent()
            try await withPairingPeripheral(SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true), agent: agent) { central, manager in
                let published = try await manager.add(Self.protectedService)
                let guarded = try #require(published.characteristic(Self.guarded)).valueHandle
                let done = try await pairTypingOurPasskey(central, manager, agent: agent)
                #expect(done.bool("ok") == true, "\(done)")
                #expect(try await central.request("read", ["handle": Int(guarded)]).bytes("value") == Array("guarded".utf8))
                #expect(await manager.bonds().first?.isAuthenticated == true)
                _ = try await central.request("disconnect")
            }
        }

        /// The issue's attack, on the air: a central that never paired subscribes to a
        /// characteristic whose reads need encryption. Its Client Characteristic Configuration
        /// write is refused (Core 6.0, Vol 3, Part C, 10.3.1) and no value reaches it; paired,
        /// it gets them; once our app removes its bond, none, though the link stays encrypted
        /// with the old key. Both sides are checked: what our app is told, and what our host
        /// sent on the ATT channel (recorded by the Bumble central).
        @Test("An unpaired central gets no protected notification; paired it does; its bond removed, none again")
        func protectedNotifications() async throws {
            try await withPairingPeripheral(SecurityManagerSettings(), plugins: ["bluejay_pairing", "bluejay_hostile"]) { central, manager in
                let published = try await manager.add(PeripheralService(uuid: Self.service, characteristics: [
                    PeripheralCharacteristic(uuid: Self.feed, properties: [.read, .notify], readSecurity: .encryption, value: [0]),
                    PeripheralCharacteristic(uuid: Self.marker, properties: [.notify], value: [0]),
                ]))
                let feed = try #require(published.characteristic(Self.feed))
                let marker = try #require(published.characteristic(Self.marker))
                var connections = await manager.connectionEvents().makeAsyncIterator()
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                guard case let .connected(link)? = await connections.next() else {
                    Issue.record("no connection event")
                    return
                }
                _ = try await central.request("discover")
                _ = try await central.request("hostile", ["mode": "record", "cid": 4, "events": false])
                let feedHandle = Int(feed.valueHandle)
                let markerHandle = Int(marker.valueHandle)
                func feedValues() -> [[UInt8]] {
                    central.receivedEvents.filter { $0.name == "value" && $0.int("handle") == feedHandle }.compactMap { $0.bytes("value") }
                }
                /// Our app notifies the marker, and the central gets it: what was sent before it arrived before it.
                func markerArrives(_ value: UInt8) async throws {
                    #expect(try await manager.updateValue([value], for: marker).delivered == [link])
                    try await central.waitForEvent(named: "value") { $0.int("handle") == markerHandle && $0.bytes("value") == [value] }
                }

                // Never paired: the subscription is refused with Insufficient Authentication (pair first).
                #expect(try await central.request("subscribe", ["handle": feedHandle]).int("att_error") == 0x05)
                #expect(await manager.subscribers(of: feed).isEmpty)
                _ = try await central.request("subscribe", ["handle": markerHandle])
                try await waitUntil("the marker subscribed") { await manager.subscribers(of: marker) == [link] }
                for value: UInt8 in 1...3 {
                    #expect(try await manager.updateValue([value], for: feed).shortfall == .noSubscribers)
                }
                try await markerArrives(0xE1)
                #expect(feedValues().isEmpty, "no protected value reached the unpaired central")

                // Paired: it subscribes and gets the values.
                let paired = try await central.request("initiate")
                #expect(paired.bool("paired") == true, "\(paired)")
                #expect(try await central.request("subscribe", ["handle": feedHandle]).int("att_error") == nil)
                let delivered = try await manager.updateValue([0x10], for: feed)
                #expect(delivered.delivered == [link] && delivered.succeeded, "\(delivered)")
                try await markerArrives(0xE2)
                #expect(feedValues() == [[0x10]])

                // Its bond removed on our side: nothing more, the link still encrypted with the old key.
                let identity = try #require(await manager.bonds().first).peerIdentity
                #expect(try await manager.removeBond(with: identity))
                let security = try await manager.security(of: link)
                #expect(security.isEncrypted && security.isBondRemoved)
                for value: UInt8 in 0x11...0x13 {
                    let withheld = try await manager.updateValue([value], for: feed)
                    #expect(withheld.withheld == [ValueUpdateResult.Withheld(central: link, reason: .bondRemoved)], "\(withheld)")
                    #expect(withheld.delivered.isEmpty && !withheld.succeeded)
                }
                try await markerArrives(0xE3)
                #expect(feedValues() == [[0x10]], "nothing after the bond was removed")
                #expect(try await central.request("read", ["handle": feedHandle]).int("att_error") == 0x05)

                // On the air: our host sent the protected value once, and only while the central was paired.
                let recorded = try await central.request("hostile", ["mode": "recorded", "cid": 4])
                let pushed: Set<UInt8> = [ATTOpcode.handleValueNotification.rawValue, ATTOpcode.handleValueIndication.rawValue]
                let pushes = (recorded["pdus"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(Hex.decode) }.filter { pdu in
                    pdu.first.map(pushed.contains) == true && ByteReader.uint16(in: pdu[...], at: 1) == feed.valueHandle
                }
                #expect(pushes == [[ATTOpcode.handleValueNotification.rawValue, UInt8(feedHandle & 0xFF), UInt8(feedHandle >> 8), 0x10]])
                _ = try await central.request("disconnect")
            }
        }

        @Test("Our peripheral asks the central to pair (Security Request)")
        func securityRequest() async throws {
            try await withPairingPeripheral(SecurityManagerSettings()) { central, manager in
                _ = try await manager.add(Self.protectedService)
                var events = await manager.connectionEvents().makeAsyncIterator()
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                guard case let .connected(connected)? = await events.next() else {
                    Issue.record("no connection event")
                    return
                }
                let security = try await manager.pair(connected)
                #expect(security.isEncrypted)
                try await central.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                _ = try await central.request("disconnect")
            }
        }

        /// A Bumble central bonds with our peripheral by Passkey Entry; then, its keys put aside,
        /// it pairs again from the same address with Just Works. Our peripheral knows the
        /// address's bond before the keys: it refuses (Authentication Requirements, the agent's
        /// default) and keeps the bond; with its keys back, the central re-encrypts with it.
        @Test("A Just Works pairing from a passkey-bonded central's address is refused; the bond survives and re-encrypts")
        func weakerPairingFromABondedCentral() async throws {
            let agent = ScriptedPairingAgent()
            let settings = SecurityManagerSettings(ioCapability: .displayOnly, initialRetryInterval: .zero, maximumRetryInterval: .zero)
            try await withPairingPeripheral(settings, agent: agent) { central, manager in
                let published = try await manager.add(Self.protectedService)
                let guarded = try #require(published.characteristic(Self.guarded)).valueHandle
                #expect(try await pairTypingOurPasskey(central, manager, agent: agent).bool("ok") == true)
                try await waitUntil("our side stored the bond") { await manager.bonds().count == 1 }
                let bonds = await manager.bonds()
                #expect(bonds.count == 1 && bonds.first?.isAuthenticated == true)

                _ = try await central.request("stash_keys")
                _ = try await central.request("pairing_config", ["io": "none", "mitm": false])
                let attempt = try await central.request("initiate")
                #expect(attempt.bool("paired") == false, "\(attempt)")
                let done = try await central.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                #expect(done.int("reason") == 0x03, "Authentication Requirements: \(done)")
                // The keys: the bond's GATT client state (clientState) is saved as the server
                // learns it and may change meanwhile; it is not what a refused pairing could touch.
                let now = await manager.bonds()
                #expect(now.map(\.peerKeys) == bonds.map(\.peerKeys) && now.map(\.localKeys) == bonds.map(\.localKeys),
                        "the bond is as it was: same LTK, IRK, CSRK")
                #expect(now.map(\.peerIdentity) == bonds.map(\.peerIdentity) && now.map(\.isAuthenticated) == [true]
                        && now.map(\.createdAt) == bonds.map(\.createdAt))

                _ = try await central.request("restore_keys")
                _ = try await central.request("disconnect")
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                let encrypted = try await central.request("encrypt")
                #expect(encrypted.bool("encrypted") == true, "\(encrypted)")
                #expect(try await central.request("read", ["handle": Int(guarded)]).bytes("value") == Array("guarded".utf8))
                _ = try await central.request("disconnect")
            }
        }

        /// Repeated Attempts' budget across peers, against a real central: a failed passkey
        /// guess closes Passkey Entry with everyone for the window (a budget of one here, and no
        /// wait per peer, so that only the budget speaks), and only Passkey Entry: the same
        /// central comparing numbers pairs.
        @Test("A failed passkey guess closes Passkey Entry for the window; Numeric Comparison stays open",
              arguments: InteropController.allCases)
        func passkeyGuessBudget(controller: InteropController) async throws {
            let agent = ScriptedPairingAgent()
            var settings = SecurityManagerSettings(ioCapability: .keyboardDisplay, requiresMITM: true).withoutBackoff
            settings.failedPairingBudget = 1
            try await withPairingPeripheral(settings, agent: agent, controller: controller) { central, manager in
                let published = try await manager.add(Self.protectedService)
                let guarded = try #require(published.characteristic(Self.guarded)).valueHandle
                let guess = try await pairTypingOurPasskey(central, manager, agent: agent) { ($0 + 1) % 1_000_000 }
                #expect(guess.bool("ok") == false, "the wrong passkey fails")

                // Passkey Entry again: refused with Repeated Attempts as the method is chosen,
                // before any passkey is shown.
                let again = try await central.request("initiate")
                #expect(again.bool("paired") == false, "\(again)")
                let refused = try await central.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                #expect(refused.int("reason") == 0x09, "Repeated Attempts: \(refused)")
                #expect(agent.displayedPasskeys.count == 1, "no second passkey shown")

                // Numeric Comparison: open.
                _ = try await central.request("pairing_config", ["io": "yesno", "mitm": true])
                let compared = try await central.request("initiate")
                #expect(compared.bool("paired") == true, "\(compared)")
                #expect(agent.comparedNumbers.count == 1)
                #expect(try await central.request("read", ["handle": Int(guarded)]).bytes("value") == Array("guarded".utf8))
                _ = try await central.request("disconnect")
            }
        }

        /// Our peripheral asks for MITM protection against a NoInputNoOutput central: unbonded,
        /// the central's Just Works pairing is refused (Authentication Requirements); bonded
        /// with Just Works, the central encrypts with that bond: either way a typed error.
        @Test("secure(authenticated: true) against a NoInputNoOutput central: a typed error, unbonded or bonded with Just Works")
        func authenticationAgainstNoInputNoOutputCentral() async throws {
            let settings = SecurityManagerSettings(initialRetryInterval: .zero, maximumRetryInterval: .zero)
            try await withPairingPeripheral(settings) { central, manager in
                var events = await manager.connectionEvents().makeAsyncIterator()
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                guard case let .connected(connected)? = await events.next() else {
                    Issue.record("no connection event")
                    return
                }
                await #expect(throws: PeripheralError.host(.pairingFailed(.refused(reason: .authenticationRequirements, cause: .authenticationRequired)))) {
                    try await manager.pair(connected, authenticated: true)
                }
                #expect(try await central.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }.int("reason") == 0x03)

                // A Just Works bond first; then the central encrypts with it when asked for MITM.
                #expect(try await manager.pair(connected).isEncrypted)
                _ = try await central.request("disconnect")
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                var again: Central?
                while again == nil, let event = await events.next() {
                    if case let .connected(central) = event { again = central }
                }
                let reconnected = try #require(again, "no second connection event")
                await #expect(throws: PeripheralError.host(.pairingFailed(.authenticationRequired))) {
                    try await manager.pair(reconnected, authenticated: true)
                }
                #expect(try await manager.security(of: reconnected).isEncrypted, "encrypted, without MITM protection")
                #expect(central.receivedEvents.filter { $0.name == "pairing_done" && $0.bool("ok") == true }.count == 1)
                _ = try await central.request("disconnect")
            }
        }

        struct Refusal: Sendable, CustomTestStringConvertible {
            let name: String
            let config: [String: any Sendable]
            let reason: SMPPairingFailureReason
            var testDescription: String { name }
        }

        static let refusals: [Refusal] = [
            Refusal(name: "legacy pairing", config: ["io": "yesno", "mitm": true, "sc": false], reason: .authenticationRequirements),
            Refusal(name: "Just Works", config: ["io": "none", "mitm": false, "sc": true], reason: .authenticationRequirements),
            Refusal(name: "a 7-octet key", config: ["io": "yesno", "mitm": true, "sc": true, "key_size": 7], reason: .encryptionKeySize),
        ]

        /// Our peripheral in Secure Connections Only mode (level 4): each central that cannot
        /// give it is refused with the spec's reason, and nothing is stored.
        @Test("Secure Connections Only refuses a central that offers", arguments: refusals)
        func secureConnectionsOnly(_ refusal: Refusal) async throws {
            var settings = SecurityManagerSettings(ioCapability: .displayYesNo, initialRetryInterval: .zero, maximumRetryInterval: .zero)
            settings.secureConnectionsOnly = true
            let agent = RecordingOutcomeAgent()
            try await withPairingPeripheral(settings, agent: agent) { central, manager in
                _ = try await central.request("pairing_config", refusal.config.mapValues { $0 as Any })
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                let attempt = try await central.request("initiate")
                #expect(attempt.bool("paired") == false, "\(attempt)")
                let done = try await central.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                #expect(done.int("reason") == Int(refusal.reason.rawValue), "\(done)")
                try await waitUntil("our agent heard the failure") { !agent.failures.isEmpty }
                #expect(agent.failures.first?.reason == refusal.reason)
                #expect(await manager.bonds().isEmpty)
                _ = try await central.request("disconnect")
            }
        }

        /// The Bumble central, claiming a keyboard and asking for MITM protection, connects to our
        /// peripheral (advertising now) and pairs, typing what `typing` makes of the passkey our
        /// agent displays. Returns the central's pairing_done event.
        private func pairTypingOurPasskey(_ central: BumbleRig, _ manager: PeripheralManager, agent: ScriptedPairingAgent,
                                          typing: (UInt32) -> UInt32 = { $0 }) async throws -> RigEvent {
            _ = try await central.request("pairing_config", ["io": "keyboard", "mitm": true])
            try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
            // Our controller's public address, on Bumble's controllers and on Rootcanal alike.
            let address = try await #require(manager.host).publicAddressText
            _ = try await central.request("connect", ["address": address, "address_type": "public"])
            _ = try await central.request("initiate", ["wait": false])
            // Tell the Bumble central what our agent displays, once it has.
            try await waitUntil("our agent displays a passkey") { !agent.displayedPasskeys.isEmpty }
            _ = try await central.request("pairing_config", ["typed": Int(typing(agent.displayedPasskeys[0]))])
            return try await central.waitForEvent(named: "pairing_done")
        }

        /// Our PeripheralManager on controller A (or on Rootcanal) with these settings, a Bumble
        /// central with the pairing plugin (and any other) on the rig.
        private func withPairingPeripheral(_ settings: SecurityManagerSettings, agent: (any PairingAgent)? = nil,
                                           plugins: [String] = ["bluejay_pairing"], controller: InteropController = .bumble,
                                           _ body: (BumbleRig, PeripheralManager) async throws -> Void) async throws {
            try await withBumbleRig(script: .central, arguments: plugins.flatMap { ["--plugin", $0] }, controller: controller) { central in
                var configuration = HostConfiguration()
                configuration.security = settings
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification), configuration: configuration)
                if let agent { await manager.setPairingAgent(agent) }
                do {
                    try await manager.powerOn()
                    try await body(central, manager)
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

/// Records how pairings ended.
final class RecordingOutcomeAgent: PairingAgent {
    private let ended = Mutex<[Result<PairingOutcome, PairingFailure>]>([])

    var failures: [PairingFailure] {
        ended.withLock { $0.compactMap { if case let .failure(failure) = $0 { failure } else { nil } } }
    }

    func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async {
        ended.withLock { $0.append(result) }
    }
}
