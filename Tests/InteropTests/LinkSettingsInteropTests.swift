import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Testing

extension InteropSuites {
    /// PHY, data length and connection parameters of our host against a Bumble peripheral.
    /// The PHY update runs in the rig's patched controllers (stock Bumble never answers LE
    /// Set PHY; see Tests/InteropTests/bumble/README.md); LE Set Data Length is stock Bumble's.
    /// On Rootcanal the PHY and connection updates run in its link layer, between two
    /// controllers of its own; it has no LE Set Data Length either.
    @Suite("Host link settings against a Bumble peripheral", .sharedRootcanal)
    struct LinkSettingsInteropTests {
        @Test("A PHY update to 2M is accepted and reaches Bumble's host", arguments: InteropController.allCases)
        func phyUpdateAccepted(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer, timeout: .seconds(10))
                    let phy = try await connection.setPHY(.le2M)
                    #expect(phy == ConnectionPHY(tx: .le2M, rx: .le2M))
                    #expect(connection.phy == phy)
                    let seen = try await rig.waitForEvent(named: "phy")
                    #expect(seen.int("tx_phy") == 2)
                    #expect(seen.int("rx_phy") == 2)
                    #expect(try await connection.readPHY() == phy, "LE Read PHY of the controller agrees")
                    try await connection.disconnect()
                }
            }
        }

        @Test("A peer without 2M or Coded refuses the PHY update with Unsupported Remote Feature")
        func phyUpdateRefused() async throws {
            try await withBumbleRig { rig in
                try await rig.request("phy_support", ["phys": ["1m"]])
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer, timeout: .seconds(10))
                    let refusal = LinkProcedureRefusal(procedure: .phyUpdate, refusedBy: .peer, status: .unsupportedRemoteFeature)
                    await #expect(throws: HostError.linkProcedureRefused(refusal)) { _ = try await connection.setPHY(.le2M) }
                    #expect(connection.phy == .le1M)
                    #expect(connection.isConnected)
                    try await connection.disconnect()
                }
            }
        }

        /// Neither controller has LE Set Data Length: Bumble's has no handler for it, Rootcanal
        /// 1.10.0 leaves it out of its supported commands and answers Unknown HCI Command too
        /// (its log: "Unknown command, opcode: 0x2022"). The update itself is tested between two
        /// of our hosts on our virtual controller.
        @Test("LE Set Data Length, which neither controller has, is a typed refusal by the controller",
              arguments: InteropController.allCases)
        func dataLengthRefused(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    if controller == .rootcanal {
                        #expect(await host.controllerInfo?.supports(.leSetDataLength) == false, "Rootcanal 1.10.0 does not list it")
                    }
                    let connection = try await host.connect(to: try rig.peer, timeout: .seconds(10))
                    let refusal = LinkProcedureRefusal(procedure: .dataLengthUpdate, refusedBy: .controller, status: .unknownCommand)
                    await #expect(throws: HostError.linkProcedureRefused(refusal)) {
                        _ = try await connection.setDataLength(octets: 251, time: 2120)
                    }
                    #expect(connection.dataLength == .initial)
                    #expect(connection.isConnected)
                    try await connection.disconnect()
                }
            }
        }

        @Test("A connection parameter preset applies as the central", arguments: InteropController.allCases)
        func parameterPreset(on controller: InteropController) async throws {
            try await withBumbleRig(controller: controller) { rig in
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer, timeout: .seconds(10))
                    let parameters = try await connection.updateParameters(.balanced)
                    #expect(ConnectionParameterPreference.balanced.intervalRange.contains(parameters.interval))
                    #expect(parameters.peripheralLatency == 0)
                    #expect(parameters.supervisionTimeout == 500)
                    #expect(connection.parameters == parameters)
                    try await connection.disconnect()
                }
            }
        }
    }
}
