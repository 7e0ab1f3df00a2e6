import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("GATT server: adding and removing services", .timeLimit(.minutes(1)))
struct GATTServerServiceChangedTests {
    @Test("Adding and removing a service indicates Service Changed with its range to a client that asked")
    func serviceChangedToOurClient() async throws {
        let harness = await ServerHarness()
        let client = harness.connectClient()
        #expect(try await client.enableServiceChangedIndications())
        var changes = client.serviceChanges().makeAsyncIterator()
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        let next = await changes.next()
        #expect(next?.affectedHandles == battery.handleRange)
        #expect(try await client.discoverPrimaryServices(uuid: TestDatabase.battery).map(\.handleRange) == [battery.handleRange])

        try await harness.server.removeService(battery)
        let removal = await changes.next()
        #expect(removal?.affectedHandles == battery.handleRange)
        #expect(removal?.invalidatedServices.map(\.uuid) == [TestDatabase.battery])
        #expect(try await client.discoverPrimaryServices(uuid: TestDatabase.battery).isEmpty)
    }

    @Test("A client that did not enable Service Changed is not told")
    func silentForOthers() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        _ = try await raw.request(.readRequest(.init(handle: AttributeDatabase.deviceNameHandle)))
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)
        #expect(await raw.recorder.next(timeout: .milliseconds(100)) == nil)
    }

    @Test("Removing every application service sends one indication covering them all; GAP and GATT stay")
    func removeAll() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        _ = try await raw.request(.writeRequest(.init(handle: AttributeDatabase.serviceChangedConfigurationHandle, value: [0x02, 0x00])))
        let first = try await harness.server.addService(TestDatabase.definition)
        raw.send(.handleValueConfirmation(.init()))
        let second = try await harness.server.addService(TestDatabase.batteryDefinition)
        raw.send(.handleValueConfirmation(.init()))
        _ = await raw.recorder.next()
        _ = await raw.recorder.next()
        await harness.server.removeAllServices()
        let indication = try #require(await raw.recorder.next())
        var expected: [UInt8] = [ATTOpcode.handleValueIndication.rawValue, 0x08, 0x00]
        expected += [UInt8(first.handleRange.lowerBound & 0xFF), UInt8(first.handleRange.lowerBound >> 8)]
        expected += [UInt8(second.handleRange.upperBound & 0xFF), UInt8(second.handleRange.upperBound >> 8)]
        #expect(indication == expected)
        #expect(await harness.server.services.map(\.uuid) == [GATTAttributeType.gapService, GATTAttributeType.gattService])
    }

    @Test("Handles are laid out after the last service and freed when the last one goes")
    func handleAllocation() async throws {
        let harness = await ServerHarness()
        let first = try await harness.server.addService(TestDatabase.batteryDefinition)
        #expect(first.handleRange == 0x000E...0x0011)
        #expect(first.characteristics.first?.valueHandle == 0x0010)
        #expect(first.characteristics.first?.clientConfigurationHandle == 0x0011)
        let second = try await harness.server.addService(TestDatabase.definition)
        #expect(second.handleRange.lowerBound == 0x0012)
        try await harness.server.removeService(second)
        let third = try await harness.server.addService(TestDatabase.definition)
        #expect(third.handleRange == second.handleRange)
        // A gap in the middle stays a gap.
        try await harness.server.removeService(first)
        let fourth = try await harness.server.addService(TestDatabase.batteryDefinition)
        #expect(fourth.handleRange.lowerBound == third.handleRange.upperBound + 1)
    }

    @Test("The mandatory services, included services and unknown ones cannot be removed")
    func removalErrors() async throws {
        let harness = await ServerHarness()
        await #expect(throws: GATTServerError.mandatoryService(GATTAttributeType.gapService)) {
            try await harness.server.removeService(startingAt: 0x0001)
        }
        await #expect(throws: GATTServerError.mandatoryService(GATTAttributeType.gattService)) {
            try await harness.server.removeService(startingAt: 0x0006)
        }
        await #expect(throws: GATTServerError.unknownService(0x0002)) {
            try await harness.server.removeService(startingAt: 0x0002)
        }
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        _ = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, includedServices: [TestDatabase.battery]))
        await #expect(throws: GATTServerError.serviceIsIncluded(TestDatabase.battery, by: TestDatabase.service)) {
            try await harness.server.removeService(battery)
        }
    }

    @Test("Invalid definitions are refused with a reason")
    func invalidDefinitions() async throws {
        let harness = await ServerHarness()
        await #expect(throws: GATTServerError.includedServiceNotFound(TestDatabase.battery)) {
            try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, includedServices: [TestDatabase.battery]))
        }
        await #expect(throws: GATTServerError.self) {
            try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
                GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .read, value: [1, 2, 3], maximumValueLength: 2),
            ]))
        }
        await #expect(throws: GATTServerError.self) {
            try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
                GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .read, maximumValueLength: 600),
            ]))
        }
        do {
            try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
                GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .notify, descriptors: [
                    GATTDescriptorDefinition(uuid: GATTAttributeType.clientCharacteristicConfiguration, value: [0, 0]),
                ]),
            ]))
            Issue.record("a hand-made CCCD was accepted")
        } catch {
            #expect(error.description.contains("added by the server itself"))
        }
        // Nothing was added by the refused definitions.
        #expect(await harness.server.services.count == 2)
    }

    @Test("A definition that does not fit in the handle space is refused")
    func databaseFull() async throws {
        let harness = await ServerHarness()
        let huge = GATTServiceDefinition(uuid: TestDatabase.service, characteristics: Array(
            repeating: GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .read), count: 32_800))
        await #expect(throws: GATTServerError.databaseFull(needed: 65_601)) {
            try await harness.server.addService(huge)
        }
    }

    @Test("setValue stores without notifying and checks the handle and length")
    func setValue() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        try await harness.server.setValue([4, 4], forHandle: short)
        #expect(await harness.server.value(forHandle: short) == [4, 4])
        await #expect(throws: GATTServerError.unknownAttribute(published.handleRange.lowerBound)) {
            try await harness.server.setValue([1], forHandle: published.handleRange.lowerBound)
        }
        let bounded = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.battery, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.batteryLevel, properties: .read, maximumValueLength: 1),
        ]))
        await #expect(throws: GATTServerError.valueTooLong(length: 2, maximum: 1)) {
            try await harness.server.setValue([1, 2], forHandle: try #require(bounded.characteristics.first).valueHandle)
        }
    }
}
