import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("GATT server: discovery requests", .timeLimit(.minutes(1)))
struct GATTServerDiscoveryTests {
    @Test("Our client discovers the whole database, with the descriptors the server adds")
    func discoverDatabase() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let database = try await client.discoverDatabase()
        #expect(database.map(\.service.uuid) == [GATTAttributeType.gapService, GATTAttributeType.gattService, TestDatabase.service])
        let custom = try #require(database.last)
        #expect(custom.service.handleRange == published.handleRange)
        #expect(custom.service.handleRange.lowerBound == 0x000E)
        #expect(custom.characteristics.map(\.characteristic.uuid) == published.characteristics.map(\.uuid))
        #expect(custom.characteristics.map(\.characteristic.valueHandle) == published.characteristics.map(\.valueHandle))

        let streaming = try #require(custom.characteristics.first { $0.characteristic.uuid == TestDatabase.streaming })
        #expect(streaming.descriptors.map(\.uuid) == [GATTAttributeType.clientCharacteristicConfiguration])
        #expect(streaming.clientConfigurationHandle == published.characteristic(TestDatabase.streaming)?.clientConfigurationHandle)

        let described = try #require(custom.characteristics.first { $0.characteristic.uuid == TestDatabase.described })
        #expect(described.descriptors.map(\.uuid) == [GATTAttributeType.characteristicUserDescription,
                                                      GATTAttributeType.characteristicPresentationFormat])
        let userDescription = try #require(described.descriptors.first)
        #expect(try await client.read(userDescription) == Array("Counter".utf8))
        let format = try #require(described.descriptors.last)
        let formatValue = try await client.read(format)
        #expect(formatValue == [0x04, 0x00, 0xAD, 0x27, 0x01, 0x00, 0x00])
        #expect(try GATTPresentationFormat(bytes: formatValue).unit == 0x27AD)
        // No descriptors where none were asked for.
        let short = try #require(custom.characteristics.first { $0.characteristic.uuid == TestDatabase.short })
        #expect(short.descriptors.isEmpty)
    }

    @Test("Find By Type Value finds a primary service by 16-bit and by 128-bit UUID")
    func findPrimaryServiceByUUID() async throws {
        let harness = await ServerHarness()
        let custom = try await harness.server.addService(TestDatabase.definition)
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        let client = harness.connectClient()
        #expect(try await client.discoverPrimaryServices(uuid: TestDatabase.battery).map(\.handleRange) == [battery.handleRange])
        #expect(try await client.discoverPrimaryServices(uuid: TestDatabase.service).map(\.handleRange) == [custom.handleRange])
        #expect(try await client.discoverPrimaryServices(uuid: BluetoothUUID(UInt16(0x1234))).isEmpty)

        let raw = harness.rawBearer()
        let missing = try await raw.expectError(.findByTypeValueRequest(.init(
            startingHandle: 0x0002, endingHandle: 0xFFFF, attributeType: 0x2800, attributeValue: [0x34, 0x12])))
        #expect(missing.code == .attributeNotFound)
        #expect(missing.handle == 0x0002)
    }

    @Test("Find Information answers one UUID width per response and as many entries as fit in MTU - 2")
    func findInformationFormatsAndPaging() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.battery, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.service, properties: .read, value: [1]),
        ]))
        let raw = harness.rawBearer()
        // At MTU 23, 16-bit entries are 4 octets: (23 - 2) / 4 = 5 of them.
        guard case let .findInformationResponse(first) = try await raw.request(
            .findInformationRequest(.init(startingHandle: 0x0001, endingHandle: 0xFFFF))) else {
            Issue.record("expected a Find Information Response")
            return
        }
        #expect(first.format == .uuid16)
        #expect(first.entries.map(\.handle) == [1, 2, 3, 4, 5])
        #expect(first.entries.map(\.type) == [GATTAttributeType.primaryService, GATTAttributeType.characteristic,
                                              GATTAttributeType.deviceName, GATTAttributeType.characteristic,
                                              GATTAttributeType.appearance])
        // The characteristic value has a 128-bit type: it gets a response of its own.
        let valueHandle = try #require(published.characteristics.first?.valueHandle)
        guard case let .findInformationResponse(declaration) = try await raw.request(
            .findInformationRequest(.init(startingHandle: valueHandle - 1, endingHandle: 0xFFFF))) else {
            Issue.record("expected a Find Information Response")
            return
        }
        #expect(declaration.format == .uuid16)
        #expect(declaration.entries.map(\.handle) == [valueHandle - 1])
        guard case let .findInformationResponse(value) = try await raw.request(
            .findInformationRequest(.init(startingHandle: valueHandle, endingHandle: 0xFFFF))) else {
            Issue.record("expected a Find Information Response")
            return
        }
        #expect(value.format == .uuid128)
        #expect(value.entries == [.init(handle: valueHandle, type: TestDatabase.service)])
    }

    @Test("Ranged requests refuse a zero or reversed range with Invalid Handle and an empty one with Attribute Not Found")
    func rangeErrors() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        let requests: [(ATTPDU, UInt16)] = [
            (.findInformationRequest(.init(startingHandle: 0, endingHandle: 10)), 0),
            (.findInformationRequest(.init(startingHandle: 9, endingHandle: 3)), 9),
            (.findByTypeValueRequest(.init(startingHandle: 0, endingHandle: 10, attributeType: 0x2800, attributeValue: [0x00, 0x18])), 0),
            (.readByTypeRequest(.init(startingHandle: 5, endingHandle: 4, attributeType: GATTAttributeType.characteristic)), 5),
            (.readByGroupTypeRequest(.init(startingHandle: 0, endingHandle: 0xFFFF, attributeGroupType: GATTAttributeType.primaryService)), 0),
        ]
        for (request, handle) in requests {
            let error = try await raw.expectError(request)
            #expect(error.code == .invalidHandle, "\(request)")
            #expect(error.handle == handle, "\(request)")
        }
        let empty: [ATTPDU] = [
            .findInformationRequest(.init(startingHandle: 0x0100, endingHandle: 0xFFFF)),
            .readByTypeRequest(.init(startingHandle: 0x0100, endingHandle: 0xFFFF, attributeType: GATTAttributeType.characteristic)),
            .readByGroupTypeRequest(.init(startingHandle: 0x0100, endingHandle: 0xFFFF, attributeGroupType: GATTAttributeType.primaryService)),
        ]
        for request in empty {
            let error = try await raw.expectError(request)
            #expect(error.code == .attributeNotFound, "\(request)")
            #expect(error.handle == 0x0100, "\(request)")
        }
    }

    @Test("Read By Group Type of anything but a service is Unsupported Group Type")
    func unsupportedGroupType() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        let error = try await raw.expectError(.readByGroupTypeRequest(.init(
            startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: GATTAttributeType.characteristic)))
        #expect(error.code == .unsupportedGroupType)
        #expect(error.handle == 1)
    }

    @Test("Read By Group Type stops where the value length changes, and pages by MTU")
    func groupTypePaging() async throws {
        let harness = await ServerHarness()
        _ = try await harness.server.addService(TestDatabase.definition)
        _ = try await harness.server.addService(TestDatabase.batteryDefinition)
        let raw = harness.rawBearer()
        guard case let .readByGroupTypeResponse(first) = try await raw.request(.readByGroupTypeRequest(.init(
            startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: GATTAttributeType.primaryService))) else {
            Issue.record("expected a Read By Group Type Response")
            return
        }
        // GAP and GATT (16-bit); the 128-bit service waits for the next request.
        #expect(first.entries.map(\.handle) == [0x0001, 0x0006])
        #expect(first.entries.map(\.endGroupHandle) == [0x0005, 0x000D])
        guard case let .readByGroupTypeResponse(second) = try await raw.request(.readByGroupTypeRequest(.init(
            startingHandle: 0x000E, endingHandle: 0xFFFF, attributeGroupType: GATTAttributeType.primaryService))) else {
            Issue.record("expected a Read By Group Type Response")
            return
        }
        #expect(second.entries.count == 1)
        #expect(second.entries.first?.value == TestDatabase.service.littleEndianBytes128)
    }

    @Test("Read By Type returns equal-length values cut to MTU - 4, and reports the first unreadable one")
    func readByTypeRules() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let raw = harness.rawBearer()
        let long = try #require(published.characteristic(TestDatabase.long))
        guard case let .readByTypeResponse(response) = try await raw.request(.readByTypeRequest(.init(
            startingHandle: 1, endingHandle: 0xFFFF, attributeType: TestDatabase.long))) else {
            Issue.record("expected a Read By Type Response")
            return
        }
        #expect(response.entries.map(\.handle) == [long.valueHandle])
        #expect(response.entries.first?.value == Array(TestDatabase.longValue.prefix(19)))

        let writeOnly = try #require(published.characteristic(TestDatabase.writeOnly))
        let refused = try await raw.expectError(.readByTypeRequest(.init(
            startingHandle: 1, endingHandle: 0xFFFF, attributeType: TestDatabase.writeOnly)))
        #expect(refused.code == .readNotPermitted)
        #expect(refused.handle == writeOnly.valueHandle)
    }

    @Test("Characteristic declarations are found page by page at the default MTU")
    func characteristicPaging() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.battery, characteristics: (0..<12).map {
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xB000 + $0)), properties: .read, value: [UInt8($0)])
        }))
        let client = harness.connectClient()
        let recorder = harness.recorder(for: 0x0040)
        let service = GATTService(uuid: TestDatabase.battery, handleRange: published.handleRange)
        let characteristics = try await client.discoverCharacteristics(of: service)
        #expect(characteristics.map(\.valueHandle) == published.characteristics.map(\.valueHandle))
        // 7-octet declarations at MTU 23: (23 - 2) / 7 = 3 per response, so 4 responses and a final Attribute Not Found.
        let responses = recorder.all.filter { $0.first == ATTOpcode.readByTypeResponse.rawValue }
        #expect(responses.count == 4)
        #expect(responses.allSatisfy { $0.count <= 23 })
    }

    @Test("Included services are declared and found")
    func includedServices() async throws {
        let harness = await ServerHarness()
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        let custom = try await harness.server.addService(GATTServiceDefinition(
            uuid: TestDatabase.service, includedServices: [TestDatabase.battery],
            characteristics: [GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .read, value: [1])]))
        let client = harness.connectClient()
        let service = GATTService(uuid: TestDatabase.service, handleRange: custom.handleRange)
        let included = try await client.discoverIncludedServices(of: service)
        #expect(included.map(\.service.uuid) == [TestDatabase.battery])
        #expect(included.map(\.service.handleRange) == [battery.handleRange])
        #expect(included.first?.declarationHandle == custom.handleRange.lowerBound + 1)
        // The include declaration does not hide the characteristics after it.
        #expect(try await client.discoverCharacteristics(of: service).map(\.uuid) == [TestDatabase.short])
    }
}
