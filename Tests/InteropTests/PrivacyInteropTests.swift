import BluetoothCore
import BluetoothCrypto
import BluetoothHost
import Testing

extension InteropSuites {
    /// A bonded Bumble peripheral that rotates its resolvable private address stays one
    /// identity for our central: in scan results, as the address to connect to, in connections.
    @Suite("Privacy against Bumble")
    struct PrivacyInteropTests {
        /// Scans until an advertisement from `address` (written as Bumble writes it) arrives.
        private func discover(_ host: LEHost, _ address: String) async throws -> Advertisement {
            let stream = try await host.scan()
            let found = try await withTestTimeout(.seconds(20), "hearing \(address)") {
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
    }
}
