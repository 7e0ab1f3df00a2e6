import BluetoothCore
import BluetoothHCI
import Testing
@testable import BluetoothHost

/// Peers that misbehave, and callers that race, against ``ScriptedATTServer``.
@Suite(.timeLimit(.minutes(1))) struct GATTClientRobustnessTests {
    @Test func aMalformedIndicationIsStillConfirmed() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        // Handle Value Indication with a one-byte handle: too short to decode.
        server.push([ATTOpcode.handleValueIndication.rawValue, 0x01])
        let confirmation = await server.waitForSent { if case .handleValueConfirmation = $0 { return true } else { return false } }
        #expect(confirmation != nil, "the server must not be left waiting for a confirmation")
        // The bearer still works.
        #expect(try await withTestTimeout { try await client.readValue(handle: 0x0003) } == SampleDatabase.make().value(at: 0x0003))
    }

    @Test func concurrentMTUExchangesShareOneRequest() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let results = try await withTestTimeout {
            async let first = client.exchangeMTU(247)
            async let second = client.exchangeMTU(247)
            return try await [first, second]
        }
        #expect(results == [247, 247])
        #expect(client.mtu == 247)
        let exchanges = server.requests.filter { if case .exchangeMTURequest = $0 { return true } else { return false } }
        #expect(exchanges.count == 1, "the MTU is exchanged once per connection (Core 6.0, Vol 3, Part F, 3.4.2.1)")
    }

    @Test func findingACharacteristicByUUIDNamesWhatIsMissing() async throws {
        let (client, _) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let found = try await withTestTimeout {
            try await client.characteristic(SampleDatabase.measurement, inService: SampleDatabase.heartRate)
        }
        #expect(found == SampleDatabase.measurementCharacteristic)
        await #expect(throws: HostError.notFound("service 1810")) {
            _ = try await client.characteristic(SampleDatabase.measurement, inService: BluetoothUUID(UInt16(0x1810)))
        }
        await #expect(throws: HostError.notFound("characteristic 2A19 in service 180D")) {
            _ = try await client.characteristic(SampleDatabase.batteryLevel, inService: SampleDatabase.heartRate)
        }
    }
}
