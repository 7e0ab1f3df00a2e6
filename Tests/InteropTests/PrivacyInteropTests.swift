import BluetoothCore
import BluetoothCrypto
import BluetoothHost
import BluetoothTransport
import Foundation
import Logging
import Testing

extension InteropSuites {
    /// A bonded Bumble peripheral that rotates its resolvable private address stays one
    /// identity for our central: in scan results, as the address to connect to, in connections;
    /// after a restart it is connected to by its identity with no scan (on Rootcanal through
    /// the controller's resolving list).
    @Suite("Privacy against Bumble", .sharedRootcanal)
    struct PrivacyInteropTests {
        /// Scans until an advertisement from `address` (written as Bumble writes it) arrives.
        private func discover(_ host: LEHost, _ address: String) async throws -> Advertisement {
            let stream = try await host.scan()
            let found = try await withTimeout("hearing \(address)", .seconds(20)) {
                for try await advertisement in stream where advertisement.peer.address.description == address.uppercased() {
                    return advertisement
                }
                throw HostError.cancelled
            }
            await host.stopScanning()
            return found
        }

        @Test("A bonded peer seen at new private addresses keeps its identity, by scan and by connecting")
        func rotatingPeerKeepsItsIdentity() async throws {
            try await withBumbleRig(arguments: PairingInteropTests.plugin) { rig in
                // An IRK of its own to distribute (Bumble's default, all zeros, is no IRK).
                _ = try await rig.request("pairing_config", ["irk": "0f1e2d3c4b5a69788796a5b4c3d2e1f0"])
                try await withHost(on: rig) { host in
                    // Pair and bond with the peripheral at its static address; it distributes its IRK.
                    let first = try await host.connect(to: try rig.peer)
                    _ = try await host.pair(first)
                    try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                    try await first.disconnect()
                    let bond = try #require(await host.bonds().first)
                    let identity = try rig.peer
                    #expect(bond.peerIdentity == identity)
                    let irk = try #require(bond.peerKeys.identityResolvingKey)

                    var seenAt: Set<BluetoothAddress> = []
                    for round in 0..<2 {
                        let privacy = try await rig.request("privacy")
                        let text = try #require(privacy.string("address"))
                        let rpa = try #require(BluetoothAddress(text))
                        #expect(ResolvablePrivateAddress.resolves(rpa.rawValue, irk: irk), "Bumble's RPA comes from the IRK it distributed")
                        #expect(privacy.string("irk").flatMap { UInt128($0, radix: 16) } != nil)
                        seenAt.insert(rpa)

                        let advertisement = try await discover(host, text)
                        #expect(advertisement.peer == DeviceAddress(rpa, type: .random), "round \(round)")
                        #expect(advertisement.identity == identity, "round \(round)")
                        #expect(advertisement.identifier == PeripheralIdentifier(address: identity))

                        let connection = try await host.connect(to: identity)
                        #expect(connection.peer == DeviceAddress(rpa, type: .random))
                        #expect(connection.identity == identity)
                        // The bond is found through the identity: re-encryption, no pairing.
                        let security = try await host.secure(connection, allowPairing: false)
                        #expect(security.isEncrypted && security.isBonded, "\(security)")
                        try await connection.disconnect()
                    }
                    #expect(seenAt.count == 2)
                    #expect(rig.receivedEvents.filter { $0.name == "pairing_done" }.count == 1, "paired once only")
                }
            }
        }

        /// After a restart our host has never heard the bonded peer, which now advertises only
        /// from resolvable private addresses; the app connects to its identity without scanning.
        /// On Rootcanal (LL Privacy) the resolving list, loaded from the bonds at power-on, finds
        /// it: LE Create Connection names the identity (peer address type 0x02/0x03) and the host
        /// resolves nothing, as the capture shows. On Bumble's controller (no LL Privacy in the
        /// rig) the host listens for it with a passive scan of its own and resolves it.
        @Test("After a restart, a bonded peer at a private address is connected to by its identity with no scan first",
              arguments: InteropController.allCases)
        func connectByIdentityAfterRestart(on controller: InteropController) async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-privacy-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let capturePath = directory + "/host.btsnoop"
            func configuration(capture: Bool) throws -> HostConfiguration {
                var configuration = HostConfiguration()
                configuration.bondStore = FileBondStore(directory: directory + "/bonds", logger: Logger(label: "test.bonds"))
                if capture { configuration.capture = try HCICapture(path: capturePath, mode: .replace) }
                return configuration
            }
            let (identity, rpa) = try await withBumbleRig(arguments: PairingInteropTests.plugin, controller: controller) { rig in
                let identity = try rig.peer
                // Its identity is the static address it advertises from (on Rootcanal a Bumble
                // device would give its controller's public address, which our host refuses as
                // not its own).
                _ = try await rig.request("pairing_config", ["identity": identity.address.description, "identity_type": "random"])
                // An IRK of its own (a zero IRK would mean "no private addresses" to a resolving
                // list), and from now on only private addresses.
                let before = try await rig.request("privacy", ["irk": "00112233445566778899aabbccddeeff"])
                let pairedAt = DeviceAddress(try #require(before.string("address").flatMap(BluetoothAddress.init)), type: .random)
                try await withHost(on: rig, configuration: try configuration(capture: false)) { host in
                    let first = try await host.connect(to: pairedAt)
                    _ = try await host.pair(first)
                    try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                    try await first.disconnect()
                    let bond = try #require(await host.bonds().first)
                    #expect(bond.peerIdentity == identity)
                    #expect(bond.peerKeys.identityResolvingKey == 0xFFEE_DDCC_BBAA_9988_7766_5544_3322_1100, "the IRK it sent (SMP sends it least significant octet first)")
                }
                // A new private address while our host is away.
                let privacy = try await rig.request("privacy")
                let rpa = DeviceAddress(try #require(privacy.string("address").flatMap(BluetoothAddress.init)), type: .random)

                // The restart: a new host, its bonds from disk.
                try await withHost(on: rig, configuration: try configuration(capture: true)) { host in
                    let resolvesInController = await host.controllerResolvedIdentities.contains(identity)
                    #expect(resolvesInController == (controller == .rootcanal), "LL Privacy on Rootcanal only")
                    let connection = try await host.connect(to: identity)
                    #expect(connection.peer == rpa)
                    #expect(connection.identity == identity)
                    let security = try await host.secure(connection, allowPairing: false)
                    #expect(security.isEncrypted && security.isBonded, "\(security)")
                    try await connection.disconnect()
                    if controller == .rootcanal {
                        #expect(host.addressResolver.evaluations == 0, "no private address was resolved in the host")
                    } else {
                        #expect(host.addressResolver.evaluations > 0, "the host resolved the peer's private address")
                    }
                }
                #expect(rig.receivedEvents.filter { $0.name == "pairing_done" }.count == 1, "paired once only")
                return (identity, rpa)
            }

            // What the restarted host told its controller.
            let commands = try BTSnoopFile.commands(capturePath)
            let scanEnables = commands.filter { ($0.opcode == 0x200C || $0.opcode == 0x2042) && $0.parameters.first == 1 }
            let creates = commands.filter { $0.opcode == 0x200D || $0.opcode == 0x2043 }
            let create = try #require(creates.first, "no LE Create Connection in \(commands)")
            // LE Create Connection: Peer_Address_Type at offset 5, the address after it; LE
            // Extended Create Connection: at 2.
            let typeOffset = create.opcode == 0x200D ? 5 : 2
            let peerType = create.parameters[typeOffset]
            let peerAddress = Array(create.parameters[(typeOffset + 1)..<(typeOffset + 7)])
            func bytes(_ address: BluetoothAddress) -> [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: address.rawValue >> (8 * $0)) } }
            let added = commands.filter { $0.opcode == 0x2027 }
            if controller == .rootcanal {
                // Core 6.0, Vol 4, Part E, 7.8.38: type, identity (little-endian), peer IRK, local IRK.
                #expect(added.contains { Array($0.parameters.dropFirst().prefix(6)) == bytes(identity.address) }, "the bond went into the resolving list")
                #expect(commands.contains { $0.opcode == 0x202D && $0.parameters == [1] }, "address resolution enabled")
                // The identity itself: 0x03 with LE Create Connection, 0x01 with the extended one (7.8.66).
                #expect(peerAddress == bytes(identity.address), "LE Create Connection names the identity, not a private address: \(create)")
                #expect(peerType == (create.opcode == 0x200D ? 0x03 : 0x01), "\(create)")
                #expect(scanEnables.isEmpty, "nothing scanned: \(scanEnables)")
                // LE Enhanced Connection Complete (v1 0x0A, v2 0x29) carries the private address it resolved.
                let events = try BTSnoopFile.records(capturePath).filter { $0.flags == 3 && $0.data.count > 3 && $0.data[0] == 0x04 && $0.data[1] == 0x3E }
                let enhanced = try #require(events.first { $0.data[3] == 0x0A || $0.data[3] == 0x29 }, "no LE Enhanced Connection Complete")
                // Subevent, status, handle (2), role, peer type, peer address (6), local RPA (6), peer RPA (6).
                let peerRPA = Array(enhanced.data[(3 + 1 + 1 + 2 + 1 + 1 + 6 + 6)..<(3 + 1 + 1 + 2 + 1 + 1 + 6 + 6 + 6)])
                #expect(peerRPA == bytes(rpa.address), "the controller resolved \(rpa)")
            } else {
                #expect(added.isEmpty, "no resolving list without LL Privacy")
                #expect(peerType == 0x01 && peerAddress == bytes(rpa.address), "connected to the private address the host heard and resolved: \(create)")
                #expect(scanEnables.count == 1, "the host's own passive scan, once: \(scanEnables)")
            }
        }
    }
}
