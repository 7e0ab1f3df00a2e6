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
        #expect(try await withTimeout { try await client.readValue(handle: 0x0003) } == SampleDatabase.make().value(at: 0x0003))
    }

    @Test func concurrentMTUExchangesShareOneRequest() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let results = try await withTimeout {
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
        let found = try await withTimeout {
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

    // MARK: PDUs larger than ATT_MTU (Core 6.0, Vol 3, Part F, 3.2.8)

    @Test func aResponseLargerThanTheMTUFailsItsRequest() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.script { request in
            if case .readRequest = request { return .bytes([ATTOpcode.readResponse.rawValue] + Array(repeating: 0xAA, count: 23)) }
            return .standard
        }
        do {
            _ = try await withTimeout { try await client.readValue(handle: 0x0003) }
            Issue.record("a 24-octet response at MTU 23 must fail the read")
        } catch let HostError.protocolViolation(text) {
            #expect(text == "ATT response of 24 octets exceeds ATT_MTU 23")
        }
        server.script { _ in .standard }
        #expect(try await withTimeout { try await client.readValue(handle: 0x0003) } == SampleDatabase.make().value(at: 0x0003))
    }

    @Test func pushedValuesLargerThanTheMTUAreDroppedAndIndicationsStillConfirmed() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let values = client.notifications()
        server.push([ATTOpcode.handleValueNotification.rawValue, 0x03, 0x00] + Array(repeating: 1, count: 21))
        server.push([ATTOpcode.handleValueIndication.rawValue, 0x03, 0x00] + Array(repeating: 2, count: 21))
        server.push([ATTOpcode.multipleHandleValueNotification.rawValue, 0x03, 0x00, 19, 0x00] + Array(repeating: 3, count: 19))
        server.push([ATTOpcode.handleValueNotification.rawValue, 0x03, 0x00] + Array(repeating: 4, count: 20))
        let first = try await withTimeout { await values.first { _ in true } }
        #expect(first == GATTNotification(handle: 0x0003, value: Array(repeating: 4, count: 20), isIndication: false),
                "only the notification that fits arrives")
        let confirmation = await server.waitForSent { if case .handleValueConfirmation = $0 { return true } else { return false } }
        #expect(confirmation != nil, "the oversized indication is confirmed, or the server could send no other")
    }

    @Test func theExchangedMTUAppliesFromItsResponseOn() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.script { request in
            if case .exchangeMTURequest = request { return .silence }
            return .standard
        }
        let values = client.notifications()
        let exchange = Task { try await client.exchangeMTU(100) }
        _ = await server.waitForSent { if case .exchangeMTURequest = $0 { return true } else { return false } }
        // The server's PDUs of the new size right behind its response, on the same thread,
        // before the exchange's caller runs again.
        server.push(.exchangeMTUResponse(.init(serverRxMTU: 100)))
        #expect(client.mtu == 100, "set by the response itself, not later by the exchange's task")
        server.push([ATTOpcode.handleValueNotification.rawValue, 0x03, 0x00] + Array(repeating: 7, count: 97))
        #expect(try await withTimeout { try await exchange.value } == 100)
        #expect(try await withTimeout { await values.first { _ in true } }?.value == Array(repeating: 7, count: 97))
    }
}
