import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
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
                let address = try await manager.host.publicAddressText
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
                _ = try await central.request("pairing_config", ["io": "keyboard", "mitm": true])
                try await manager.startAdvertising(name: "Bluejay Secure", serviceUUIDs: [Self.service])
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                _ = try await central.request("initiate", ["wait": false])
                // Tell the Bumble central what our agent displays, once it has.
                try await waitUntil("our agent displays a passkey") { !agent.displayedPasskeys.isEmpty }
                _ = try await central.request("pairing_config", ["typed": Int(agent.displayedPasskeys[0])])
                let done = try await central.waitForEvent(named: "pairing_done")
                #expect(done.bool("ok") == true, "\(done)")
                #expect(try await central.request("read", ["handle": Int(guarded)]).bytes("value") == Array("guarded".utf8))
                #expect(await manager.bonds().first?.isAuthenticated == true)
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

        /// Our PeripheralManager on controller A (or on Rootcanal) with these settings, a Bumble
        /// central with the pairing plugin on the rig.
        private func withPairingPeripheral(_ settings: SecurityManagerSettings, agent: (any PairingAgent)? = nil,
                                           controller: InteropController = .bumble,
                                           _ body: (BumbleRig, PeripheralManager) async throws -> Void) async throws {
            try await withBumbleRig(script: .central, arguments: ["--plugin", "bluejay_pairing"], controller: controller) { central in
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
