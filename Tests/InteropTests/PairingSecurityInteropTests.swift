import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Testing

extension InteropSuites {
    /// What our central's Security Manager promises against Bumble peripherals that want more
    /// than they should get: a device claiming a bonded peer's identity, a peer that cannot
    /// give MITM protection when it is asked for, Secure Connections Only against legacy,
    /// Just Works and 7-octet keys. Each case asserts both sides' outcome.
    @Suite("Pairing security against Bumble peripherals")
    struct PairingSecurityInteropTests {
        static let plugin = ["--plugin", "bluejay_pairing"]

        /// Our central's settings with no Repeated Attempts wait, so that each case pairs at once.
        static func settings(_ io: SMPIOCapability, secureConnectionsOnly: Bool = false) -> HostConfiguration {
            var configuration = HostConfiguration()
            configuration.security = SecurityManagerSettings(ioCapability: io, secureConnectionsOnly: secureConnectionsOnly,
                                                             initialRetryInterval: .zero, maximumRetryInterval: .zero)
            return configuration
        }

        /// B1 bonds with our central by Passkey Entry. B2, another device, pairs with Just Works
        /// from a resolvable private address (a peer pairing from an identity address that names
        /// another one has it dropped, as Linux does, so a claim needs a private address) and
        /// distributes B1's identity address: our central refuses (the agent's default),
        /// keeps B1's bond as it was (same LTK, IRK, CSRK) and ends B2's link with
        /// Authentication Failure; B1 then re-encrypts with the bond, no pairing.
        @Test("A Just Works device distributing a passkey-bonded peer's identity does not take the bond over")
        func impostorKeepsOffTheBond() async throws {
            try await withBumbleRig(peripherals: 2, arguments: Self.plugin) { rig in
                let real = try rig.peripheral(1)
                _ = try await rig.request("pairing_config", ["peripheral": 1, "io": "display", "mitm": true])
                _ = try await rig.request("pairing_config", ["peripheral": 2, "io": "none", "mitm": false,
                                                             "identity": real.address, "identity_type": real.addressType])
                let agent = ScriptedPairingAgent { [rig] in
                    (try? await rig.waitForEvent(named: "pairing_display"))?.int("passkey").map(UInt32.init)
                }
                try await withHost(on: rig, configuration: Self.settings(.keyboardOnly)) { host in
                    await host.setPairingAgent(agent)
                    let first = try await host.connect(to: try rig.peripheralAddress(1))
                    let security = try await host.pair(first, authenticated: true)
                    #expect(security.isAuthenticated && security.isBonded)
                    try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                    try await first.disconnect()
                    let bond = try #require(await host.bonds().first)
                    #expect(bond.peerIdentity == (try rig.peripheralAddress(1)) && bond.isAuthenticated)

                    let privacy = try await rig.request("privacy", ["peripheral": 2, "irk": "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"])
                    let impostorAddress = try #require(privacy.string("address").flatMap(BluetoothAddress.init))
                    let impostor = try await host.connect(to: DeviceAddress(impostorAddress, type: .random))
                    await #expect {
                        try await host.pair(impostor)
                    } throws: { error in
                        guard case let HostError.pairingFailed(.weakerThanBond(replacement)) = error else { return false }
                        return replacement.identity == bond.peerIdentity && replacement.isClaimedIdentity && !replacement.proposed.isAuthenticated
                    }
                    // B2's side: its pairing ran, then the link ended with Authentication Failure.
                    let dropped = try await rig.waitForEvent(named: "disconnected") { $0.int("peripheral") == 2 }
                    #expect(dropped.int("reason") == Int(HCIStatus.authenticationFailure.rawValue), "\(dropped)")
                    #expect(await host.bonds() == [bond], "the bond is as it was")

                    let again = try await host.connect(to: try rig.peripheralAddress(1))
                    let restored = try await host.secure(again, allowPairing: false)
                    #expect(restored.isEncrypted && restored.isAuthenticated && restored.isBonded, "\(restored)")
                    try await rig.waitForEvent(named: "encryption") { $0.bool("encrypted") == true }
                    // B2's own pairing may end either way on its side (the link drops as our keys
                    // reach it); B1 paired once and re-encrypted, no second pairing.
                    #expect(rig.receivedEvents.filter { $0.name == "pairing_done" && $0.bool("ok") == true && $0.string("device") == real.address }.count == 1,
                            "B1's pairing, no second one")
                    try await again.disconnect()
                }
            }
        }

        /// `secure(authenticated: true)` and `pair(authenticated: true)` against a
        /// NoInputNoOutput peripheral: MITM in AuthReq, Just Works refused by our central with
        /// Authentication Requirements, a typed error; Bumble hears the same reason.
        @Test("Authentication asked for against a NoInputNoOutput peripheral: a typed error on our side, Authentication Requirements on Bumble's")
        func authenticationAgainstNoInputNoOutput() async throws {
            try await withBumbleRig(arguments: Self.plugin) { rig in
                _ = try await rig.request("pairing_config", ["io": "none", "mitm": false])
                try await withHost(on: rig, configuration: Self.settings(.keyboardDisplay)) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let expected = HostError.pairingFailed(.refused(reason: .authenticationRequirements, cause: .authenticationRequired))
                    await #expect(throws: expected) { try await host.secure(connection, authenticated: true) }
                    let done = try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                    #expect(done.int("reason") == 0x03, "\(done)")
                    await #expect(throws: expected) { try await host.pair(connection, authenticated: true) }
                    #expect(!connection.security.isEncrypted)
                    #expect(await host.bonds().isEmpty)
                    try await connection.disconnect()
                }
            }
        }

        struct Refusal: Sendable, CustomTestStringConvertible {
            let name: String
            let config: [String: any Sendable]
            let failure: PairingFailure
            var testDescription: String { name }
        }

        /// Secure Connections Only (Core 6.0, Vol 3, Part C, 10.2.4) is level 4: each peer that
        /// cannot give it is refused with the reason of Part H, 3.5.5.
        static let refusals: [Refusal] = [
            Refusal(name: "legacy pairing", config: ["io": "yesno", "mitm": true, "sc": false],
                    failure: .refused(reason: .authenticationRequirements, cause: .secureConnectionsRequired)),
            Refusal(name: "Just Works", config: ["io": "none", "mitm": false, "sc": true],
                    failure: .refused(reason: .authenticationRequirements, cause: .authenticationRequired)),
            Refusal(name: "a 7-octet key", config: ["io": "yesno", "mitm": true, "sc": true, "key_size": 7],
                    failure: .refused(reason: .encryptionKeySize, cause: .keySizeTooSmall(7))),
        ]

        @Test("Secure Connections Only refuses a peripheral that offers", arguments: refusals)
        func secureConnectionsOnly(_ refusal: Refusal) async throws {
            try await withBumbleRig(arguments: Self.plugin) { rig in
                _ = try await rig.request("pairing_config", refusal.config.mapValues { $0 as Any })
                try await withHost(on: rig, configuration: Self.settings(.displayYesNo, secureConnectionsOnly: true)) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    await #expect(throws: HostError.pairingFailed(refusal.failure)) { try await host.pair(connection) }
                    let done = try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                    #expect(done.int("reason") == Int(refusal.failure.reason?.rawValue ?? 0), "\(done)")
                    #expect(!connection.security.isEncrypted)
                    #expect(await host.bonds().isEmpty)
                    try await connection.disconnect()
                }
            }
        }
    }
}

