import Bluejay
import BluetoothSimulator
import Testing

/// The "PHY, data length and connection parameters" example of docs/HOST.md, as printed
/// there, run against a simulated heart-rate sensor (only the transport differs).
@Suite("docs/HOST.md: PHY, data length and connection parameters", .timeLimit(.minutes(1)))
struct ReadmeLinkSettingsExampleTests {
    @Test("The example sets 2M, the longest PDUs and the low-latency preset; the stream reports each change")
    func example() async throws {
        let simulator = Simulator()
        let sensor = try await simulator.addHeartRateSensor()
        let host = LEHost(transport: simulator.centralTransport())
        try await host.powerOn()
        let connection = try await host.connect(to: sensor.device.peripheralIdentifier.address, timeout: .seconds(10))
        let changes = connection.linkUpdates()
        func print(_ items: Any...) {}   // the example's output is not needed here

        // --- docs/HOST.md ---
        let phy = try await connection.setPHY(.le2M)            // LE Set PHY; ConnectionPHY(tx: .le2M, rx: .le2M)
        // .leCoded or .leCoded(.preferS8) for range: a controller without LE Coded refuses (0x11)
        try await host.setDefaultPHY(.le2M)                       // LE Set Default PHY, for later links
        print(connection.phy)                                     // LE 1M until a PHY update

        let length = try await connection.setDataLength()         // LE Set Data Length to the controller's maximum
        print(length.maxTxOctets, length.maxRxOctets)             // 251 251 when the peer allows it

        let now = try await connection.updateParameters(.lowLatency)   // central: LE Connection Update
                                                                        // peripheral: L2CAP Connection Parameter Update Request
        let custom = ConnectionParameterPreference(intervalMilliseconds: 30...45, peripheralLatency: 4,
                                                   supervisionTimeoutMilliseconds: 6_000)
        // --- end ---

        #expect(phy == ConnectionPHY(tx: .le2M, rx: .le2M))
        await #expect(throws: HostError.linkProcedureRefused(LinkProcedureRefusal(
            procedure: .phyUpdate, refusedBy: .controller, status: .unsupportedFeatureOrParameter))) {
            _ = try await connection.setPHY(.leCoded(.preferS8))   // the simulated controllers have no LE Coded
        }
        #expect(length.maxTxOctets == 251)
        #expect(length.maxRxOctets == 251)
        #expect(ConnectionParameterPreference.lowLatency.intervalRange.contains(now.interval))
        #expect(custom.intervalRange == 24...36)
        var seen: [LinkChange] = []
        for await change in changes {
            if case .dataLength = change { continue }
            seen.append(change)
            if seen.count == 2 { break }
        }
        #expect(seen == [.phy(phy), .parameters(now)])
        try await connection.disconnect()
        await host.shutdown()
        await simulator.shutdown()
    }
}
