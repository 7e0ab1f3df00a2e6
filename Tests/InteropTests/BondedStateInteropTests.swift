import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Logging
import Synchronization
import Testing

extension InteropSuites {
    /// What a bonded Bumble central finds of its bond with our peripheral (Core 6.0, Vol 3,
    /// Part G, 3.3.3.3: its subscriptions, kept with the bond, also across our restart; what it
    /// missed while away), and the pairing features Bumble can exercise: LE legacy OOB with a TK
    /// from either side, and Keypress Notifications from a Bumble that types our passkey.
    @Suite("Bonded state and pairing features against Bumble")
    struct BondedStateInteropTests {
        static let service = BluetoothUUID("6E400C01-B5A3-F393-E0A9-E50E24DCCA9E")
        /// Notifies values whose reads need encryption.
        static let feed = BluetoothUUID("6E400C02-B5A3-F393-E0A9-E50E24DCCA9E")
        /// Indicates values whose reads need encryption.
        static let alert = BluetoothUUID("6E400C03-B5A3-F393-E0A9-E50E24DCCA9E")

        static let definition = PeripheralService(uuid: service, characteristics: [
            PeripheralCharacteristic(uuid: feed, properties: [.read, .notify], readSecurity: .encryption, value: [0]),
            PeripheralCharacteristic(uuid: alert, properties: [.read, .indicate], readSecurity: .encryption, value: [0]),
        ])

        @Test("A bonded Bumble central gets notifications again with no CCCD write, after a reconnection and after our restart; an indication kept while it was away arrives")
        func subscriptionsOutlastTheLinkAndTheProcess() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bonded-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var configuration = HostConfiguration()
            configuration.bondStore = FileBondStore(directory: directory, logger: Logger(label: "test.bonds"))
            try await withBumbleRig(script: .central, arguments: ["--plugin", "bluejay_pairing"]) { central in
                /// The values of `handle` the central got without subscribing on that link.
                func listened(_ handle: UInt16) -> [[UInt8]] {
                    central.receivedEvents.filter { $0.name == "value" && $0.int("handle") == Int(handle) && $0.bool("listened") == true }
                        .compactMap { $0.bytes("value") }
                }
                /// The central connects, listens to both values (no CCCD write) and encrypts with its bond.
                func reconnect(_ manager: PeripheralManager, feed: UInt16, alert: UInt16) async throws {
                    try await manager.startAdvertising(name: "Bluejay Bonded", serviceUUIDs: [Self.service])
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    _ = try await central.request("listen", ["handle": Int(feed)])
                    _ = try await central.request("listen", ["handle": Int(alert)])
                    let encrypted = try await central.request("encrypt")
                    #expect(encrypted.bool("encrypted") == true, "\(encrypted)")
                }

                // First run: pair, subscribe, leave; an indication while away; come back.
                var identity: DeviceAddress?
                try await withPeripheral(central, configuration) { manager in
                    let published = try await manager.add(Self.definition)
                    let feed = try #require(published.characteristic(Self.feed))
                    let alert = try #require(published.characteristic(Self.alert))
                    try await manager.startAdvertising(name: "Bluejay Bonded", serviceUUIDs: [Self.service])
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    let paired = try await central.request("initiate")
                    #expect(paired.bool("paired") == true, "\(paired)")
                    _ = try await central.request("discover")
                    #expect(try await central.request("subscribe", ["handle": Int(feed.valueHandle)]).int("att_error") == nil)
                    #expect(try await central.request("subscribe", ["handle": Int(alert.valueHandle), "indicate": true]).int("att_error") == nil)
                    identity = try #require(await manager.bonds().first).peerIdentity
                    try await waitUntil("the central subscribed") { await manager.subscribers(of: alert).count == 1 }
                    _ = try await central.request("disconnect")
                    try await waitUntil("the central left") { await manager.subscribers(of: feed).isEmpty }

                    // Away: the indication is kept for it; a notification is not (the characteristic does not ask).
                    #expect(try await manager.updateValue([0xA1], for: alert).deferred == [identity])
                    let missed = try await manager.updateValue([0x01], for: feed)
                    #expect(missed.shortfall == .noSubscribers && missed.deferred.isEmpty)

                    let changes = await SubscriptionRecorder(manager)
                    defer { changes.stop() }
                    try await reconnect(manager, feed: feed.valueHandle, alert: alert.valueHandle)
                    // The ends of the last link's subscriptions may still be on their way to the
                    // recorder (they are told after the link is gone): the restored ones are counted.
                    try await waitUntil("both subscriptions restored") { changes.all.filter(\.isRestored).count == 2 }
                    #expect(changes.all.filter(\.isRestored).allSatisfy { $0.isSubscribed && $0.bondIdentity == identity }, "\(changes.all)")
                    #expect(changes.all.allSatisfy { $0.isRestored || !$0.isSubscribed }, "nothing subscribed but by restoration: \(changes.all)")
                    try await central.waitForEvent(named: "value") { $0.bool("listened") == true && $0.int("handle") == Int(alert.valueHandle) }
                    #expect(listened(alert.valueHandle) == [[0xA1]], "the indication kept while it was away, once")
                    #expect(try await manager.updateValue([0x02], for: feed).delivered.count == 1)
                    try await central.waitForEvent(named: "value") { $0.bool("listened") == true && $0.bytes("value") == [0x02] }
                    #expect(listened(feed.valueHandle) == [[0x02]], "not the notification sent while it was away")
                    _ = try await central.request("disconnect")
                    try await waitUntil("the central left") { await manager.subscribers(of: feed).isEmpty }
                }

                // Our process restarts: a new host on the same bond store, the same database.
                try await withPeripheral(central, configuration) { manager in
                    let published = try await manager.add(Self.definition)
                    let feed = try #require(published.characteristic(Self.feed))
                    let alert = try #require(published.characteristic(Self.alert))
                    #expect(await manager.bonds().map(\.peerIdentity) == [identity].compactMap { $0 })
                    #expect(try await manager.updateValue([0x03], for: feed).deferred.isEmpty)
                    let changes = await SubscriptionRecorder(manager)
                    defer { changes.stop() }
                    try await reconnect(manager, feed: feed.valueHandle, alert: alert.valueHandle)
                    try await waitUntil("both subscriptions restored") { changes.all.count == 2 }
                    let restored = changes.all
                    #expect(restored.allSatisfy { $0.isRestored && $0.bondIdentity == identity }, "\(restored)")
                    #expect(Set(restored.map(\.characteristic.valueHandle)) == [feed.valueHandle, alert.valueHandle])
                    #expect(try await manager.updateValue([0x04], for: feed).delivered.count == 1)
                    try await central.waitForEvent(named: "value") { $0.bool("listened") == true && $0.bytes("value") == [0x04] }
                    #expect(try await manager.updateValue([0xA2], for: alert).delivered.count == 1)
                    try await central.waitForEvent(named: "value") { $0.bool("listened") == true && $0.bytes("value") == [0xA2] }
                    _ = try await central.request("disconnect")
                }
                // One pairing in all: the central never paired again, nor wrote a CCCD after the first link.
                #expect(central.receivedEvents.filter { $0.name == "pairing_done" }.count == 1)
            }
        }

        @Test("LE legacy OOB with Bumble: our TK, then Bumble's, pair authenticated with no passkey; a wrong TK fails with Confirm Value Failed and does not use ours up")
        func legacyOutOfBand() async throws {
            // Two pairings fail on purpose, one after the other: Repeated Attempts' wait (tested
            // on its own) would refuse the second.
            var configuration = HostConfiguration()
            configuration.security = configuration.security.withoutBackoff
            try await withBumbleRig(arguments: ["--plugin", "bluejay_pairing"]) { rig in
                try await withHost(on: rig, configuration: configuration) { host in
                    let peer = try rig.peer
                    /// Pairs on a new link and leaves it; Bumble forgets its keys and we our bond after.
                    func pair(expecting failure: PairingFailure? = nil) async throws {
                        let connection = try await host.connect(to: peer)
                        if let failure {
                            await #expect(throws: HostError.pairingFailed(failure)) { try await host.pair(connection) }
                            try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                        } else {
                            let security = try await host.pair(connection)
                            #expect(security.isAuthenticated && !security.isSecureConnections && security.keySize == 16, "\(security)")
                            try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                            // The characteristic that needs MITM protection reads.
                            let guarded = try await connection.gatt.characteristic(PairingInteropTests.authenticated,
                                                                                   inService: PairingInteropTests.service)
                            #expect(try await connection.gatt.read(guarded) == Array("top secret".utf8))
                            #expect(try await host.removeBond(with: peer))
                        }
                        try await connection.disconnect()
                        try await rig.waitForEvent(named: "disconnected")
                        _ = try await rig.request("forget_keys")
                    }

                    // Our TK, handed to Bumble (a legacy-only peer).
                    let ours = await host.makeLegacyOutOfBandData()
                    _ = try await rig.request("pairing_config", ["sc": false, "legacy_tk": Hex.digits(ours.temporaryKey, count: 32, uppercase: false)])
                    try await pair()
                    // Bumble's TK, handed to us.
                    let theirs = UInt128.random(in: 1...UInt128.max)
                    _ = try await rig.request("pairing_config", ["legacy_tk": Hex.digits(theirs, count: 32, uppercase: false)])
                    await host.setPeerLegacyOutOfBandData(LegacyOutOfBandData(address: peer, temporaryKey: theirs))
                    try await pair()
                    // A device in the middle with a TK of its own: Bumble's check of our confirm value fails.
                    _ = try await rig.request("pairing_config", ["legacy_tk": Hex.digits(theirs ^ 1, count: 32, uppercase: false)])
                    try await pair(expecting: .peerFailed(.confirmValueFailed))
                    #expect(await host.bonds().isEmpty)

                    // A TK of ours again, and a peer that says it has OOB data but not this TK
                    // pairs first: it fails, and the TK still serves the peer it was made for.
                    await host.clearOutOfBandData()
                    let made = await host.makeLegacyOutOfBandData()
                    _ = try await rig.request("pairing_config", ["legacy_tk": Hex.digits(made.temporaryKey ^ 1, count: 32, uppercase: false)])
                    try await pair(expecting: .peerFailed(.confirmValueFailed))
                    _ = try await rig.request("pairing_config", ["legacy_tk": Hex.digits(made.temporaryKey, count: 32, uppercase: false)])
                    try await pair()
                }
            }
        }

        @Test("LE legacy OOB with a Bumble central and our peripheral: our TK, authenticated, no passkey; our flag answers its request (none for an LE Secure Connections one)")
        func legacyOutOfBandAsPeripheral() async throws {
            let agent = ScriptedPairingAgent()
            try await withBumbleRig(script: .central, arguments: ["--plugin", "bluejay_pairing"]) { central in
                try await withPeripheral(central, HostConfiguration(), agent: agent) { manager in
                    let ours = await (try #require(manager.host)).makeLegacyOutOfBandData()
                    _ = try await central.request("pairing_config", ["sc": false, "legacy_tk": Hex.digits(ours.temporaryKey, count: 32, uppercase: false)])
                    try await manager.startAdvertising(name: "Bluejay OOB")
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    let paired = try await central.request("initiate")
                    #expect(paired.bool("paired") == true, "\(paired)")
                    try await waitUntil("an authenticated legacy bond") {
                        await manager.bonds().first.map { $0.isAuthenticated && !$0.isSecureConnections } == true
                    }
                    #expect(agent.displayedPasskeys.isEmpty && agent.comparedNumbers.isEmpty, "no passkey, no comparison")
                    _ = try await central.request("disconnect")

                    // A TK of ours again, but the central asks for LE Secure Connections with no OOB
                    // data: our flag stays clear (the TK is for legacy pairing), so Just Works.
                    let identity = try #require(await manager.bonds().first).peerIdentity
                    #expect(try await manager.removeBond(with: identity))
                    _ = try await central.request("forget_keys")
                    _ = await (try #require(manager.host)).makeLegacyOutOfBandData()
                    _ = try await central.request("pairing_config", ["sc": true, "legacy_tk": NSNull()])
                    try await manager.startAdvertising(name: "Bluejay OOB")
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    let again = try await central.request("initiate")
                    #expect(again.bool("paired") == true, "\(again)")
                    try await waitUntil("an LE Secure Connections bond") { await manager.bonds().first?.isSecureConnections == true }
                    #expect(await manager.bonds().first?.isAuthenticated == false, "Just Works")
                    _ = try await central.request("disconnect")
                }
            }
        }

        @Test("Keypress Notifications from a Bumble central typing our passkey reach our agent in order, only when we asked for them",
              arguments: [true, false])
        func keypressesFromBumble(weAsk: Bool) async throws {
            let agent = ScriptedPairingAgent()
            var configuration = HostConfiguration()
            configuration.security = SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true, keypressNotifications: weAsk)
            try await withBumbleRig(script: .central, arguments: ["--plugin", "bluejay_pairing"]) { central in
                try await withPeripheral(central, configuration, agent: agent) { manager in
                    _ = try await central.request("pairing_config", ["io": "keyboard", "mitm": true, "keypress": true])
                    try await manager.startAdvertising(name: "Bluejay Keys")
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    _ = try await central.request("initiate", ["wait": false])
                    try await waitUntil("our agent displays a passkey") { !agent.displayedPasskeys.isEmpty }
                    _ = try await central.request("pairing_config", ["typed": Int(agent.displayedPasskeys[0])])
                    let done = try await central.waitForEvent(named: "pairing_done")
                    #expect(done.bool("ok") == true, "\(done)")
                    let sent = try #require(central.receivedEvents.first { $0.name == "keypresses_sent" })
                    #expect(sent["types"]?.arrayValue?.compactMap(\.intValue) == [0, 1, 1, 1, 2, 1, 1, 1, 1, 4], "\(sent)")
                    try await waitUntil("our host stored an authenticated bond") { await manager.bonds().first?.isAuthenticated == true }
                    if weAsk {
                        let typed: [SMPKeypressNotificationType] = [.passkeyEntryStarted] + Array(repeating: .passkeyDigitEntered, count: 3)
                            + [.passkeyDigitErased] + Array(repeating: .passkeyDigitEntered, count: 4) + [.passkeyEntryCompleted]
                        try await waitUntil("our agent heard every key") { agent.keypresses.count == typed.count }
                        #expect(agent.keypresses == typed)
                    } else {
                        // Bumble set its flag and sent them anyway: without ours they are not passed on.
                        #expect(agent.keypresses.isEmpty)
                    }
                    _ = try await central.request("disconnect")
                }
            }
        }

        @Test("Security level 4 against a Bumble central: refused after authenticated legacy pairing (Insufficient Authentication), served once it pairs again with LE Secure Connections")
        func levelFour() async throws {
            let agent = ScriptedPairingAgent()
            var configuration = HostConfiguration()
            configuration.security = SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true)
            let level4 = BluetoothUUID("6E400C04-B5A3-F393-E0A9-E50E24DCCA9E")
            try await withBumbleRig(script: .central, arguments: ["--plugin", "bluejay_pairing"]) { central in
                try await withPeripheral(central, configuration, agent: agent) { manager in
                    let published = try await manager.add(PeripheralService(uuid: Self.service, characteristics: [
                        PeripheralCharacteristic(uuid: level4, properties: [.read], readSecurity: .secureConnections, value: Array("level 4".utf8)),
                    ]))
                    let handle = Int(try #require(published.characteristic(level4)).valueHandle)
                    try await manager.startAdvertising(name: "Bluejay Level 4")
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    /// Bumble pairs, typing the passkey our agent shows.
                    func pair(secureConnections: Bool) async throws {
                        let shown = agent.displayedPasskeys.count
                        _ = try await central.request("pairing_config", ["io": "keyboard", "mitm": true, "sc": secureConnections, "typed": NSNull()])
                        _ = try await central.request("initiate", ["wait": false])
                        try await waitUntil("our agent displays a passkey") { agent.displayedPasskeys.count > shown }
                        _ = try await central.request("pairing_config", ["typed": Int(agent.displayedPasskeys[shown])])
                        let done = try await central.waitForEvent(named: "pairing_done")
                        #expect(done.bool("ok") == true, "\(done)")
                    }
                    try await pair(secureConnections: false)
                    try await waitUntil("an authenticated legacy bond") {
                        await manager.bonds().first.map { $0.isAuthenticated && !$0.isSecureConnections } == true
                    }
                    // Authenticated, 16 octets, but legacy: Insufficient Authentication (pair again).
                    #expect(try await central.request("read", ["handle": handle]).int("att_error") == 0x05)
                    try await pair(secureConnections: true)
                    try await waitUntil("the bond replaced by an LE Secure Connections one") {
                        await manager.bonds().first?.isSecureConnections == true
                    }
                    #expect(try await central.request("read", ["handle": handle]).bytes("value") == Array("level 4".utf8))
                    _ = try await central.request("disconnect")
                }
            }
        }

        /// The subscription changes our peripheral's app is told of, as they come.
        private final class SubscriptionRecorder: Sendable {
            private let changes = Mutex<[SubscriptionChange]>([])
            private let task = Mutex<Task<Void, Never>?>(nil)
            var all: [SubscriptionChange] { changes.withLock { $0 } }

            init(_ manager: PeripheralManager) async {
                let stream = await manager.subscriptionChanges()
                task.withLock { $0 = Task { [changes = self] in for await change in stream { changes.append(change) } } }
            }

            private func append(_ change: SubscriptionChange) { changes.withLock { $0.append(change) } }
            func stop() { task.withLock { $0?.cancel() } }
        }

        /// Our peripheral on the rig's controller A, powered off at the end whatever happens.
        private func withPeripheral(_ central: BumbleRig, _ configuration: HostConfiguration, agent: (any PairingAgent)? = nil,
                                    _ body: (PeripheralManager) async throws -> Void) async throws {
            let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification), configuration: configuration)
            if let agent { await manager.setPairingAgent(agent) }
            do {
                try await manager.powerOn()
                try await body(manager)
            } catch {
                await manager.powerOff()
                Issue.record("\(error)\n\(central.diagnostics)")
                throw error
            }
            await manager.powerOff()
        }
    }
}
