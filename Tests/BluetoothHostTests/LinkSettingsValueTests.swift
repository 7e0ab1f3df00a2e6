import BluetoothHCI
import BluetoothHost
import Testing

@Suite("PHY preferences, data lengths and connection parameter presets")
struct LinkSettingsValueTests {
    @Test func presetsAreAndroidsConnectionPriorities() {
        // Android's CONNECTION_PRIORITY_HIGH, _BALANCED and _LOW_POWER (units of 1.25 ms and 10 ms).
        #expect(ConnectionParameterPreference.lowLatency == .init(intervalRange: 9...12, peripheralLatency: 0, supervisionTimeout: 500))
        #expect(ConnectionParameterPreference.balanced == .init(intervalRange: 24...40, peripheralLatency: 0, supervisionTimeout: 500))
        #expect(ConnectionParameterPreference.lowPower == .init(intervalRange: 80...100, peripheralLatency: 2, supervisionTimeout: 500))
        #expect(ConnectionParameterPreference.lowPower.description == "interval 100.0...125.0 ms, latency 2, timeout 5000 ms")
        // Each keeps the supervision timeout above (1 + latency) × interval × 2 (Core 6.0,
        // Vol 6, Part B, 4.5.2) and within Apple's 2 s to 6 s.
        for preset in [ConnectionParameterPreference.lowLatency, .balanced, .lowPower] {
            let longest = Double(preset.intervalRange.upperBound) * 1.25 * Double(1 + preset.peripheralLatency)
            #expect(Double(preset.supervisionTimeout) * 10 > longest * 3)
            #expect((200...600).contains(preset.supervisionTimeout))
        }
    }

    @Test func millisecondsBecomeSpecificationUnits() {
        let preference = ConnectionParameterPreference(intervalMilliseconds: 30...45, peripheralLatency: 4, supervisionTimeoutMilliseconds: 6_000)
        #expect(preference == .init(intervalRange: 24...36, peripheralLatency: 4, supervisionTimeout: 600))
        // Out of range values saturate instead of trapping; the host then refuses them.
        let absurd = ConnectionParameterPreference(intervalMilliseconds: 1e9...Double.infinity, peripheralLatency: 0, supervisionTimeoutMilliseconds: -5)
        #expect(absurd.intervalRange == UInt16.max...UInt16.max)
        #expect(absurd.supervisionTimeout == 0)
    }

    @Test func phyPreferencesBecomeLESetPHYFields() {
        #expect(PHYPreference.le2M.allPHYs == [])
        #expect(PHYPreference.le2M.transmit == .le2M)
        #expect(PHYPreference.any.allPHYs == [.noTransmitPreference, .noReceivePreference])
        #expect(PHYPreference(transmit: nil, receive: .leCoded).allPHYs == .noTransmitPreference)
        #expect(PHYPreference.leCoded(.preferS8).codedOptions == .preferS8)
        #expect(PHYPreference.le2M.description == "tx [2M] rx [2M]")
        #expect(ConnectionPHY(tx: .le2M, rx: .le1M).description == "tx LE 2M, rx LE 1M")
        #expect(ConnectionPHY.le1M.description == "LE 1M")
    }

    @Test func theInitialDataLengthIsTheLEMinimum() {
        #expect(DataLength.initial == DataLength(maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328))
        #expect(DataLength.octetRange == 27...251)
        let refusal = LinkProcedureRefusal(procedure: .phyUpdate, refusedBy: .peer, status: .unsupportedRemoteFeature)
        #expect(HostError.linkProcedureRefused(refusal).description.hasPrefix("the PHY update was refused by the peer: "))
    }
}
