import BluetoothCore
import BluetoothHCI
import Testing
@testable import BluetoothHost

/// Discovery answered by a peer that lies about handles: every answer is refused with
/// ``HostError/protocolViolation(_:)``, never a trap, and the bearer stays usable.
@Suite(.timeLimit(.minutes(1))) struct GATTClientHostileDiscoveryTests {
    /// A characteristic declaration's value: properties, value handle, 16-bit UUID.
    static func declaration(valueHandle: UInt16, uuid: UInt16 = 0x2A37) -> [UInt8] {
        [0x10, UInt8(truncatingIfNeeded: valueHandle), UInt8(valueHandle >> 8), UInt8(truncatingIfNeeded: uuid), UInt8(uuid >> 8)]
    }

    /// Answers the first Read By Type for characteristic declarations with `entries`.
    func lie(_ server: ScriptedATTServer, with entries: [ATTReadByTypeResponse.AttributeData]) throws {
        let response = try #require(ATTReadByTypeResponse(entries: entries))
        server.script { request in
            guard case let .readByTypeRequest(read) = request, read.attributeType == GATTAttributeType.characteristic else { return .standard }
            return .pdu(.readByTypeResponse(response))
        }
    }

    @Test func aDeclarationAtHandleZeroBetweenTwoValidOnesIsRefused() async throws {
        // Once an unsigned underflow (a trap) computing where the first characteristic ends.
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        try lie(server, with: [
            .init(handle: 0x000B, value: Self.declaration(valueHandle: 0x000C)),
            .init(handle: 0x0000, value: Self.declaration(valueHandle: 0x000E)),
            .init(handle: 0x000F, value: Self.declaration(valueHandle: 0x0010)),
        ])
        await #expect(throws: HostError.self) {
            _ = try await withTimeout { try await client.discoverCharacteristics(of: SampleDatabase.heartRateService) }
        }
        server.script { _ in .standard }
        #expect(try await withTimeout { try await client.readValue(handle: 0x0003) } == SampleDatabase.make().value(at: 0x0003),
                "the bearer still works")
    }

    @Test(arguments: [
        [UInt16(0x000F), 0x000B],  // descending
        [0x000B, 0x000B],          // repeated
        [0x000B, 0x0020],          // outside the service
        [0x0009, 0x000B],          // before the requested start
    ])
    func handlesOutOfOrderOrOutOfRangeAreRefused(_ handles: [UInt16]) async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        try lie(server, with: handles.map { .init(handle: $0, value: Self.declaration(valueHandle: $0 &+ 1)) })
        let error = await #expect(throws: HostError.self) {
            _ = try await withTimeout { try await client.discoverCharacteristics(of: SampleDatabase.heartRateService) }
        }
        guard case .protocolViolation? = error else {
            Issue.record("expected a protocol violation, got \(String(describing: error))")
            return
        }
    }

    @Test func descriptorsOutOfOrderAreRefused() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.measurementCharacteristic
        let response = ATTFindInformationResponse(entries: [
            .init(handle: 0x0010, type: GATTAttributeType.clientCharacteristicConfiguration),
            .init(handle: 0x000F, type: GATTAttributeType.clientCharacteristicConfiguration),
        ])
        server.script { request in
            guard case .findInformationRequest = request else { return .standard }
            return .pdu(.findInformationResponse(response))
        }
        await #expect(throws: HostError.self) { _ = try await withTimeout { try await client.discoverDescriptors(of: characteristic) } }
    }

    @Test func overlappingServicesAreRefused() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let response = try #require(ATTReadByGroupTypeResponse(entries: [
            .init(handle: 0x0001, endGroupHandle: 0x0010, value: [0x00, 0x18]),
            .init(handle: 0x0005, endGroupHandle: 0x0012, value: [0x0D, 0x18]),
        ]))
        server.script { request in
            guard case .readByGroupTypeRequest = request else { return .standard }
            return .pdu(.readByGroupTypeResponse(response))
        }
        await #expect(throws: HostError.self) { _ = try await withTimeout { try await client.discoverAllPrimaryServices() } }
    }
}
