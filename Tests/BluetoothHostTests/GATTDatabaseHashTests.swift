import BluetoothCore
@testable import BluetoothHost
import Testing

/// The Database Hash (Core 6.0, Vol 3, Part G, 7.3) of this device's server.
@Suite("GATT Database Hash", .timeLimit(.minutes(1)))
struct GATTDatabaseHashTests {
    /// Computed outside this project (Python `cryptography`'s AES-CMAC, zero key) over the
    /// attributes written out by hand from Part G, 7.3.1: GAP 0x0001-0x0005, GATT
    /// 0x0006-0x000D (Service Changed, its CCCD, Client Supported Features, Database Hash),
    /// Battery 0x000E-0x0011 (Battery Level read+notify, its CCCD). Least significant octet first.
    static let expectedHash = "9c4998c996a210af5f51b0067c08a45f"
    /// The message that went into it.
    static let expectedMessage = "01000028001802000328020300002a04000328020500012a06000028011807000328200800052a090002290a0003280a0b00292b"
        + "0c000328020d002a2b0e0000280f180f000328121000192a11000229"

    @Test("The hash of a known database is the independently computed one")
    func hashOfAKnownDatabase() throws {
        var database = AttributeDatabase(deviceName: "Bluejay", appearance: 0x0341)
        _ = try database.add(TestDatabase.batteryDefinition)
        #expect(Hex.encode(database.hash.bytes) == Self.expectedHash)
        #expect(database.hash.description == String(Self.expectedHash.reversedOctets))
    }

    @Test("Only 16 octets make a hash")
    func hashLength() {
        #expect(GATTDatabaseHash(bytes: [UInt8](repeating: 1, count: 15)) == nil)
        #expect(GATTDatabaseHash(bytes: [UInt8](repeating: 1, count: 16))?.bytes.count == 16)
    }

    @Test("Values, names and configurations do not change the hash; services do")
    func whatTheHashCovers() async throws {
        let harness = await ServerHarness()
        let before = await harness.server.databaseHash
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        let withBattery = await harness.server.databaseHash
        #expect(withBattery != before)
        #expect(Hex.encode(withBattery.bytes) == Self.expectedHash, "the device name and appearance do not count")
        let level = try #require(battery.characteristic(TestDatabase.batteryLevel))
        try await harness.server.setValue([42], forHandle: level.valueHandle)
        await harness.server.setDeviceName("Renamed")
        let client = harness.connectClient()
        let found = try await client.discoverCharacteristics(of: GATTService(uuid: TestDatabase.battery, handleRange: battery.handleRange))
        try await client.writeValue(ClientCharacteristicConfiguration.notification.bytes, handle: #require(level.clientConfigurationHandle))
        #expect(found.count == 1)
        #expect(await harness.server.databaseHash == withBattery)
        try await harness.server.removeService(battery)
        #expect(await harness.server.databaseHash == before)
    }

    @Test("Read By Type of 0x2B2A answers the hash; the client reads it")
    func clientReadsTheHash() async throws {
        let harness = await ServerHarness()
        _ = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let hash = try await client.readDatabaseHash()
        #expect(hash == (await harness.server.databaseHash))
        #expect(client.discoveryRequestCount == 0, "reading the hash is not discovery")
    }
}

private extension String {
    /// The hexadecimal octets in reverse order.
    var reversedOctets: String {
        var octets: [Substring] = []
        var index = startIndex
        while index < endIndex {
            let next = self.index(index, offsetBy: 2)
            octets.append(self[index..<next])
            index = next
        }
        return octets.reversed().joined()
    }
}
