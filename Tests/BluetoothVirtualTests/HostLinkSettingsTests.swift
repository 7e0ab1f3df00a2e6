import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// PHY, data length and connection parameters between two of our hosts over the virtual link.
@Suite("Host: PHY, data length and connection parameters", .timeLimit(.minutes(1)))
struct HostLinkSettingsTests {
    @Test func aPHYUpdateTo2MReachesBothHosts() async throws {
        let pair = try await TwoDevices.linkSettings()
        let (connection, incoming) = try await pair.connect()
        #expect(connection.phy == .le1M)
        let peripheralChanges = incoming.linkUpdates()
        let phy = try await connection.setPHY(.le2M)
        #expect(phy == ConnectionPHY(tx: .le2M, rx: .le2M))
        #expect(connection.phy == phy)
        let seen = try await withTimeout("the peripheral's PHY change") {
            for await change in peripheralChanges { if case let .phy(phy) = change { return phy } }
            throw TestTimeout(description: "changes ended")
        }
        #expect(seen == ConnectionPHY(tx: .le2M, rx: .le2M))
        #expect(try await incoming.readPHY() == seen, "LE Read PHY agrees with the event")
        // Back to 1M, asked by the peripheral this time: the procedure runs from either role.
        #expect(try await incoming.setPHY(.le1M) == .le1M)
        try await waitUntil("the central saw 1M again") { connection.phy == .le1M }
        await pair.shutdown()
    }

    @Test func aPeerWithout2MOrCodedRefusesThePHYUpdate() async throws {
        var features = VirtualController.defaultLEFeatures
        features.remove(.le2MPHY)
        let pair = try await TwoDevices.linkSettings(peripheralFeatures: features)
        let (connection, incoming) = try await pair.connect()
        let refusal = LinkProcedureRefusal(procedure: .phyUpdate, refusedBy: .peer, status: .unsupportedRemoteFeature)
        await #expect(throws: HostError.linkProcedureRefused(refusal)) { _ = try await connection.setPHY(.le2M) }
        #expect(connection.phy == .le1M)
        #expect(incoming.phy == .le1M)
        #expect(connection.isConnected, "a refused update leaves the link up")
        await pair.shutdown()
    }

    @Test func aControllerWithout2MRefusesLESetPHY() async throws {
        var features = VirtualController.defaultLEFeatures
        features.remove(.le2MPHY)
        let pair = try await TwoDevices.linkSettings(centralFeatures: features)
        let (connection, _) = try await pair.connect()
        let refusal = LinkProcedureRefusal(procedure: .phyUpdate, refusedBy: .controller, status: .unsupportedFeatureOrParameter)
        await #expect(throws: HostError.linkProcedureRefused(refusal)) { _ = try await connection.setPHY(.le2M) }
        // Asking for a PHY with an empty set is the caller's mistake, caught before the controller.
        await #expect(throws: HostError.invalidArgument("no transmit PHY given (use nil for no preference)")) {
            _ = try await connection.setPHY(PHYPreference(transmit: [], receive: .le1M))
        }
        await pair.shutdown()
    }

    @Test func theDefaultPHYOfThePeerBoundsTheUpdate() async throws {
        let pair = try await TwoDevices.linkSettings()
        try await pair.peripheral.setDefaultPHY(.le1M)
        let (connection, _) = try await pair.connect()
        #expect(try await connection.setPHY(.le2M) == .le1M, "the peripheral's host prefers 1M only: no change, and no error")
        await #expect(throws: HostError.linkProcedureRefused(LinkProcedureRefusal(
            procedure: .phyUpdate, refusedBy: .controller, status: .unsupportedFeatureOrParameter))) {
            try await pair.central.setDefaultPHY(.leCoded)
        }
        await pair.shutdown()
    }

    @Test func theDataLengthGoesToTheControllersMaximumAndThePeersLimit() async throws {
        let pair = try await TwoDevices.linkSettings(peripheralMaximumDataLength: 100, requestsDataLength: false)
        let (connection, incoming) = try await pair.connect()
        #expect(connection.dataLength == .initial)
        let changes = incoming.linkUpdates()
        let length = try await connection.setDataLength()
        // The central sends up to what the peripheral receives (100); the peripheral still 27.
        #expect(length == DataLength(maxTxOctets: 100, maxTxTime: 912, maxRxOctets: 27, maxRxTime: 328))
        #expect(connection.maximumTxOctets == 100)
        let seen = try await withTimeout("the peripheral's data length change") {
            for await change in changes { if case let .dataLength(length) = change { return length } }
            throw TestTimeout(description: "changes ended")
        }
        #expect(seen.maxRxOctets == 100)
        #expect(try await incoming.setDataLength() == DataLength(maxTxOctets: 100, maxTxTime: 912, maxRxOctets: 100, maxRxTime: 912),
                "the peripheral's 100-octet maximum")
        await #expect(throws: HostError.invalidArgument("data length 300 octets is outside 27...251")) {
            _ = try await connection.setDataLength(octets: 300)
        }
        await pair.shutdown()
    }

    @Test func theHostAsksForTheLongestPDUsAfterConnectingWhenConfigured() async throws {
        let pair = try await TwoDevices.linkSettings(requestsDataLength: true)
        let (connection, incoming) = try await pair.connect()
        try await waitUntil("the automatic data length update") { connection.dataLength.maxTxOctets == 251 }
        try await waitUntil("the peripheral heard it") { incoming.dataLength.maxRxOctets == 251 }
        await pair.shutdown()
    }

    @Test func presetsChangeTheParametersFromEitherRole() async throws {
        let pair = try await TwoDevices.linkSettings()
        let (connection, incoming) = try await pair.connect()
        let changes = incoming.linkUpdates()
        // As the central: LE Connection Update.
        let fast = try await connection.updateParameters(.lowLatency)
        #expect(ConnectionParameterPreference.lowLatency.intervalRange.contains(fast.interval))
        #expect(fast.peripheralLatency == 0)
        #expect(fast.supervisionTimeout == 500)
        let seen = try await withTimeout("the peripheral's parameter change") {
            for await change in changes { if case let .parameters(parameters) = change { return parameters } }
            throw TestTimeout(description: "changes ended")
        }
        #expect(seen == fast)
        // As the peripheral: L2CAP Connection Parameter Update Request, run by the central's host.
        let slow = try await incoming.updateParameters(.lowPower)
        #expect(ConnectionParameterPreference.lowPower.intervalRange.contains(slow.interval))
        #expect(slow.peripheralLatency == 2)
        try await waitUntil("the central saw the low-power parameters") { connection.parameters == slow }
        await pair.shutdown()
    }
}

/// Bounded waits of the PHY update, on simulated time.
@Suite("Host: PHY update waits are bounded", .timeLimit(.minutes(1)))
struct HostPHYWaitTests {
    @Test func aControllerThatNeverAcknowledgesLESetPHYGivesATimeoutError() async throws {
        // As Bumble's controller: LE Set PHY gets no Command Status, and no PHY update follows.
        let rig = try await CentralHostRig.make()
        rig.filter.dropIncoming { event in
            switch event {
            case let .commandStatus(status): return status.opcode == LESetPHYCommand.opcode
            case .le(.phyUpdateComplete): return true
            default: return false
            }
        }
        let start = rig.clock.now
        let update = Task { [connection = rig.connection] in try await connection.setPHY(.le2M) }
        try await rig.waitForTimer(at: start + .seconds(5))
        rig.clock.advance(to: start + .seconds(5))
        await #expect(throws: HostError.procedureTimeout("the PHY update (the controller never answered LE Set PHY)")) {
            _ = try await update.value
        }
        #expect(rig.connection.isConnected)
        await rig.host.shutdown()
    }

    @Test func aPHYUpdateThatNeverCompletesTimesOut() async throws {
        let rig = try await CentralHostRig.make()
        rig.filter.dropIncoming { if case .le(.phyUpdateComplete) = $0 { return true }; return false }
        let start = rig.clock.now
        let update = Task { [connection = rig.connection] in try await connection.setPHY(.le2M) }
        try await waitUntil("LE Set PHY went out") { rig.filter.sentCommands.contains(LESetPHYCommand.opcode) }
        try await rig.waitForTimer(at: start + .seconds(40))
        rig.clock.advance(to: start + .seconds(40))
        await #expect(throws: HostError.procedureTimeout("the PHY update")) { _ = try await update.value }
        await rig.host.shutdown()
    }
}

extension TwoDevices {
    /// Our central host and our peripheral host with controllers of chosen features, data
    /// length exchanged only when asked for.
    static func linkSettings(centralFeatures: LEFeatures = VirtualController.defaultLEFeatures,
                             peripheralFeatures: LEFeatures = VirtualController.defaultLEFeatures,
                             peripheralMaximumDataLength: UInt16 = 251, requestsDataLength: Bool = false) async throws -> TwoDevices {
        var options = TwoDevices.Options()
        options.central.controller = .init(leFeatures: centralFeatures)
        options.peripheral.controller = .init(leFeatures: peripheralFeatures, maximumDataLength: peripheralMaximumDataLength)
        options.configuration.exchangesMTUOnConnect = false
        options.configuration.requestsDataLengthExtension = requestsDataLength
        // Every test here changes the data length: the wait is only a hang guard. (At 500 ms a
        // loaded machine could run out of it mid-procedure, and get the old length back.)
        options.configuration.dataLengthChangeWait = .seconds(20)
        let devices = try await TwoDevices(options)
        // The hosts suggested the longest PDUs as the default when they powered on, and the
        // controllers would update the data length on their own: back to 27 octets, so that
        // only what a test asks for changes it.
        for host in [devices.central, devices.peripheral] {
            _ = try await host.controller.send(LEWriteSuggestedDefaultDataLengthCommand(suggestedMaxTxOctets: 27, suggestedMaxTxTime: 328))
        }
        return devices
    }
}
