import Bluejay
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Synchronization
import Testing

extension InteropSuites {
    /// A controller without a public address, as Zephyr's `hci_uart` on an nRF52840 and Bumble's
    /// controller given no address are: Read BD_ADDR answers 00:00:00:00:00:00. The host must
    /// not advertise, scan, connect or pair as the public address 00:00:00:00:00:00 (Bumble then
    /// puts a random address type on the link, and every LE Secure Connections pairing failed
    /// with DHKey Check Failed), but take a static random address as its identity.
    @Suite("A controller without a public address (Bumble, controller variants no-public-address and zephyr-static-address)")
    struct NoPublicAddressInteropTests {
        static let variant = ["--controller-variant", "no-public-address"]
        static let zephyr = ["--controller-variant", "zephyr-static-address"]
        static let pairing = ["--plugin", "bluejay_pairing"]

        /// The identities the Bumble peer keeps keys for.
        /// The identities the peer keeps keys for, once it keeps at least `count`: Bumble stores
        /// a pairing's keys in a task of its own, which may end after our side has returned
        /// (seen in a loaded run). At most 20 s.
        static func peerKeptIdentities(_ rig: BumbleRig, atLeast count: Int = 1) async throws -> [String] {
            func read() async throws -> [String] {
                (try await rig.request("keys")["peers"]?.arrayValue ?? []).compactMap(\.stringValue)
            }
            let deadline = ContinuousClock.now + .seconds(20)
            var peers = try await read()
            while peers.count < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                peers = try await read()
            }
            return peers
        }

        @Test("Our central pairs by every method and distributes its static random identity", arguments: PairingInteropTests.centralCases)
        func centralPairs(_ method: PairingInteropTests.Case) async throws {
            try await withBumbleRig(arguments: Self.variant + Self.pairing) { rig in
                try await PairingInteropTests.pairAsCentral(method, on: rig) { host, connection in
                    let identity = try #require(await host.identity)
                    #expect(identity.isGenerated && identity.address.type == .random && identity.address.address.isStaticRandom, "\(identity)")
                    // Over the air the link is the identity's, and the peer keeps the identity.
                    #expect(connection.local == identity.address)
                    #expect(try await Self.peerKeptIdentities(rig) == [identity.address.address.description])
                    #expect(await host.bonds().first?.localIdentity == identity.address)
                }
            }
        }

        @Test("A Zephyr controller's own static address (vendor Read Static Addresses) is the identity; pairing works")
        func zephyrStaticAddress() async throws {
            try await withBumbleRig(arguments: Self.zephyr + Self.pairing) { rig in
                let expected = try #require(rig.hostStaticAddress.flatMap(BluetoothAddress.init))
                try await PairingInteropTests.pairAsCentral(PairingInteropTests.centralCases[0], on: rig) { host, connection in
                    let identity = try #require(await host.identity)
                    #expect(identity == LocalIdentity(address: DeviceAddress(expected, type: .random), source: .controllerStaticAddress))
                    #expect(await host.controllerInfo?.staticAddress == expected)
                    #expect(connection.local == identity.address)
                    #expect(try await Self.peerKeptIdentities(rig) == [expected.description])
                }
            }
        }

        @Test("The generated address is kept beside the bonds: a new host has the same identity and re-encrypts with the bond")
        func bondsSurviveARestart() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-static-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var configuration = HostConfiguration()
            configuration.bondStore = FileBondStore(directory: directory, logger: .init(label: "test"))
            try await withBumbleRig(arguments: Self.variant + Self.pairing) { rig in
                let first = try await withHost(on: rig, configuration: configuration) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    _ = try await host.pair(connection)
                    try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                    try await connection.disconnect()
                    return try #require(await host.identity)
                }
                #expect(first.source == .generatedStaticAddress(isNew: true, isKept: true), "\(first)")
                let kept = try String(contentsOfFile: directory + "/" + FileStaticAddressStore.fileName, encoding: .utf8)
                #expect(kept.contains(first.address.address.description), "\(kept)")

                try await withHost(on: rig, configuration: configuration) { host in
                    #expect(await host.identity == LocalIdentity(address: first.address, source: .generatedStaticAddress(isNew: false, isKept: true)))
                    let connection = try await host.connect(to: try rig.peer)
                    #expect(await host.bond(for: connection) != nil)
                    // The stored key encrypts the link, no second pairing: the peer knows us.
                    let security = try await host.secure(connection)
                    #expect(security.isEncrypted && security.isBonded)
                    try await rig.waitForEvent(named: "encryption") { $0.bool("encrypted") == true }
                    #expect(rig.receivedEvents.filter { $0.name == "pairing_done" }.count == 1)
                    try await connection.disconnect()
                }
            }
        }

        @Test("A Bumble central pairs with our peripheral, which advertises from its static identity")
        func peripheralPairs() async throws {
            try await using(try BumbleRig.start(script: .central, arguments: Self.variant + Self.pairing)) { central in
                try await central.waitForReady()
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification))
                do {
                    try await manager.powerOn()
                    let ourHost = try #require(manager.host)
                    let identity = try #require(await ourHost.identityAddress)
                    #expect(identity.type == .random && identity.address.isStaticRandom)
                    try await manager.startAdvertising(name: "Bluejay Static")
                    _ = try await central.request("scan")
                    // The central hears us at the static address, as a random one.
                    let heard = try await central.waitForEvent(named: "advertisement") { $0.string("address") == identity.address.description }
                    #expect(heard.string("address_type") == "random")
                    _ = try await central.request("connect", ["address": identity.address.description, "address_type": "random"])
                    let paired = try await central.request("initiate")
                    #expect(paired.bool("paired") == true, "\(paired)")
                    // Our side keeps the bond once its key distribution is done.
                    try await waitUntil("our peripheral keeps the bond") { await !manager.bonds().isEmpty }
                    #expect(await manager.bonds().map(\.localIdentity) == [identity])
                    #expect(try await Self.peerKeptIdentities(central) == [identity.address.description])
                    _ = try await central.request("disconnect")
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }

        @Test("Bluejay: a protected characteristic reads after automatic pairing")
        func bluejayPairsOnItsOwn() async throws {
            try await withBluejay(arguments: Self.variant + Self.pairing) { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                // Refused with Insufficient Encryption, paired (Just Works), read again.
                let value: ReadResult<String> = try await callback(timeout: .seconds(30)) { done in
                    bluejay.read(from: InteropSuites.BluejayInteropTests.Pairing.encrypted) { done($0) }
                }
                #expect(value == .success("secret"))
                #expect(bluejay.linkSecurity?.isEncrypted == true)
                #expect(try await Self.peerKeptIdentities(rig).map { BluetoothAddress($0)?.isStaticRandom } == [true])
            }
        }

        @Test("bluejay pair stores a bond under the static identity; a new process reads with it; adapters shows the identity")
        func cliPairs() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bonds-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await withBumbleRig(arguments: Self.variant + Self.pairing) { rig in
                let hci = rig.transportSpecification
                let paired = try await bluejay("pair", "--hci", hci, "--address", rig.peerAddress, "--random", "--bond-directory", directory, "--json")
                #expect(paired.status == 0, "\(paired)")
                let peers = try await Self.peerKeptIdentities(rig)
                let identity = try #require(peers.first.flatMap(BluetoothAddress.init), "\(peers)")
                #expect(identity.isStaticRandom)

                let read = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                             "--service", "6E400301-B5A3-F393-E0A9-E50E24DCCA9E",
                                             "--characteristic", "6E400302-B5A3-F393-E0A9-E50E24DCCA9E",
                                             "--format", "utf8", "--bond-directory", directory)
                #expect(read.status == 0, "\(read)")
                #expect(read.stdout.contains("secret"), "\(read)")
                #expect(rig.receivedEvents.filter { $0.name == "pairing_done" }.count == 1)

                let adapters = try await bluejay("adapters", "--hci", hci, "--bond-directory", directory, "--json")
                #expect(adapters.status == 0, "\(adapters)")
                let info = try #require(try adapters.jsonObjects().first, "\(adapters)")
                #expect(info["identity"] as? String == identity.description, "\(adapters)")
                #expect(info["identityType"] as? String == "random")
                #expect(info["identityGenerated"] as? Bool == true)
                #expect(info["publicAddress"] is NSNull, "\(adapters)")
                #expect((info["adaptations"] as? [String])?.contains { $0.hasPrefix("no public address") } == true, "\(adapters)")
            }
        }
    }
}
