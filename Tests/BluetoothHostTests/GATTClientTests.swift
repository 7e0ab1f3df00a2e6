import BluetoothCore
import BluetoothHCI
import Testing
@testable import BluetoothHost

/// The database most GATT client tests run against.
enum SampleDatabase {
    static let heartRate = BluetoothUUID(UInt16(0x180D))
    static let battery = BluetoothUUID(UInt16(0x180F))
    static let measurement = BluetoothUUID(UInt16(0x2A37))
    static let bodySensorLocation = BluetoothUUID(UInt16(0x2A38))
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))
    static let customService: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    static let customCharacteristic: BluetoothUUID = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
    static let includedCustom: BluetoothUUID = "0000FEED-0000-1000-8000-00805F9B34FC"
    static let cccd = GATTAttributeType.clientCharacteristicConfiguration
    static let longValue = (0..<60).map { UInt8($0) }

    static let gapService = GATTService(uuid: GATTAttributeType.gapService, handleRange: 0x0001...0x0005)
    static let gattService = GATTService(uuid: GATTAttributeType.gattService, handleRange: 0x0006...0x0009)
    static let heartRateService = GATTService(uuid: heartRate, handleRange: 0x000A...0x0012)
    static let custom = GATTService(uuid: customService, handleRange: 0x0013...0x0016)

    static let measurementCharacteristic = GATTCharacteristic(uuid: measurement, properties: [.notify], declarationHandle: 0x000D,
                                                              valueHandle: 0x000E, endHandle: 0x0010)
    static let customValue = GATTCharacteristic(uuid: customCharacteristic,
                                                properties: [.read, .write, .writeWithoutResponse, .notify, .indicate],
                                                declarationHandle: 0x0014, valueHandle: 0x0015, endHandle: 0x0016)

    static func make(entriesPerResponse: Int = 2) -> FakeAttributeDatabase {
        var database = FakeAttributeDatabase(entriesPerResponse: entriesPerResponse)
        database.service(0x0001...0x0005, GATTAttributeType.gapService)
        database.characteristic(0x0002, GATTAttributeType.deviceName, [.read], value: Array("Bluejay".utf8))
        database.characteristic(0x0004, GATTAttributeType.appearance, [.read], value: [0x41, 0x03])
        database.service(0x0006...0x0009, GATTAttributeType.gattService)
        database.characteristic(0x0007, GATTAttributeType.serviceChanged, [.indicate])
        database.descriptor(0x0009, cccd)
        database.service(0x000A...0x0012, heartRate)
        database.include(0x000B, 0x0020...0x0022, battery)
        database.include(0x000C, 0x0030...0x0032, includedCustom)
        database.characteristic(0x000D, measurement, [.notify])
        database.descriptor(0x000F, cccd)
        database.descriptor(0x0010, GATTAttributeType.characteristicUserDescription, Array("Beats".utf8))
        database.characteristic(0x0011, bodySensorLocation, [.read], value: [0x01])
        database.service(0x0013...0x0016, customService)
        database.characteristic(0x0014, customCharacteristic, [.read, .write, .writeWithoutResponse, .notify, .indicate], value: longValue)
        database.descriptor(0x0016, cccd)
        database.service(0x0020...0x0022, battery, primary: false)
        database.characteristic(0x0021, batteryLevel, [.read], value: [100])
        database.service(0x0030...0x0032, includedCustom, primary: false)
        database.characteristic(0x0031, batteryLevel, [.read], value: [50])
        return database
    }
}

extension ATTPDU {
    var readByGroupTypeStart: UInt16? {
        if case let .readByGroupTypeRequest(request) = self { return request.startingHandle }
        return nil
    }

    var writeRequest: ATTWriteRequest? {
        if case let .writeRequest(request) = self { return request }
        return nil
    }

    var isReadRequest: Bool {
        if case .readRequest = self { return true }
        return false
    }
}

// MARK: - Discovery

@Suite(.timeLimit(.minutes(1))) struct GATTClientDiscoveryTests {
    @Test func discoversPrimaryServicesPageByPageUntilAttributeNotFound() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let services = try await withTimeout { try await client.discoverAllPrimaryServices() }
        #expect(services == [SampleDatabase.gapService, SampleDatabase.gattService, SampleDatabase.heartRateService, SampleDatabase.custom])
        // Pages of two, then one (16-bit and 128-bit UUIDs do not share a response), then nothing.
        #expect(server.requests.compactMap(\.readByGroupTypeStart) == [0x0001, 0x000A, 0x0013, 0x0017])
        #expect(client.cachedServices == services)
    }

    @Test func stopsWhenAServiceEndsAtTheLastHandle() async throws {
        var database = FakeAttributeDatabase()
        database.service(0x0001...0x0004, GATTAttributeType.gapService)
        database.service(0x0005...0xFFFF, SampleDatabase.heartRate)
        let (client, server) = ScriptedATTServer.connect(database: database)
        let services = try await withTimeout { try await client.discoverAllPrimaryServices() }
        #expect(services.map(\.handleRange) == [0x0001...0x0004, 0x0005...0xFFFF])
        #expect(server.requests.count == 1, "no request after 0xFFFF")
    }

    @Test func aServerThatGoesBackwardsIsAProtocolViolation() async throws {
        // A broken server answers every request with the first page: the client must not loop.
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let firstPage = try #require(ATTReadByGroupTypeResponse(entries: [.init(handle: 0x0001, endGroupHandle: 0x0005, value: [0x00, 0x18])]))
        server.script { _ in .pdu(.readByGroupTypeResponse(firstPage)) }
        let error = await #expect(throws: HostError.self) { try await withTimeout { try await client.discoverAllPrimaryServices() } }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
        #expect(server.requests.compactMap(\.readByGroupTypeStart) == [0x0001, 0x0006])
    }

    @Test func aGroupEndingBeforeItStartsIsAProtocolViolation() async throws {
        let (client, server) = ScriptedATTServer.connect()
        let backwards = try #require(ATTReadByGroupTypeResponse(entries: [.init(handle: 0x0010, endGroupHandle: 0x0008, value: [0x0D, 0x18])]))
        server.script { _ in .pdu(.readByGroupTypeResponse(backwards)) }
        let error = await #expect(throws: HostError.self) { try await withTimeout { try await client.discoverAllPrimaryServices() } }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func discoversPrimaryServicesByUUID() async throws {
        var database = SampleDatabase.make(entriesPerResponse: 1)
        database.service(0x0040...0x0045, SampleDatabase.heartRate)
        let (client, server) = ScriptedATTServer.connect(database: database)
        let services = try await withTimeout { try await client.discoverPrimaryServices(uuid: SampleDatabase.heartRate) }
        #expect(services.map(\.handleRange) == [0x000A...0x0012, 0x0040...0x0045])
        let starts = server.requests.compactMap { pdu -> UInt16? in
            guard case let .findByTypeValueRequest(find) = pdu else { return nil }
            #expect(find.attributeType == 0x2800)
            #expect(find.attributeValue == [0x0D, 0x18])
            return find.startingHandle
        }
        #expect(starts == [0x0001, 0x0013, 0x0046])
    }

    @Test func discoversCharacteristicsWithTheirEndHandles() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristics = try await withTimeout { try await client.discoverCharacteristics(of: SampleDatabase.heartRateService) }
        #expect(characteristics == [
            SampleDatabase.measurementCharacteristic,
            GATTCharacteristic(uuid: SampleDatabase.bodySensorLocation, properties: [.read], declarationHandle: 0x0011,
                               valueHandle: 0x0012, endHandle: 0x0012),
        ])
        // Two per page: the second page starts after the last one found and ends with nothing more.
        let readByType = server.requests.compactMap { pdu -> ClosedRange<UInt16>? in
            guard case let .readByTypeRequest(read) = pdu else { return nil }
            #expect(read.attributeType == GATTAttributeType.characteristic)
            return read.startingHandle...read.endingHandle
        }
        #expect(readByType.first == 0x000A...0x0012)
        #expect(readByType.count == 2)

        let onlyLocation = try await withTimeout {
            try await client.discoverCharacteristics(of: SampleDatabase.heartRateService, uuid: SampleDatabase.bodySensorLocation)
        }
        #expect(onlyLocation.map(\.valueHandle) == [0x0012])
        let custom = try await withTimeout { try await client.discoverCharacteristics(of: SampleDatabase.custom) }
        #expect(custom == [SampleDatabase.customValue])
    }

    @Test func aTruncatedCharacteristicDeclarationIsAProtocolViolation() async throws {
        var database = FakeAttributeDatabase()
        database.service(0x0001...0x0005, SampleDatabase.heartRate)
        database.add(0x0002, GATTAttributeType.characteristic, [0x10, 0x03]) // properties, then half a handle
        let (client, _) = ScriptedATTServer.connect(database: database)
        let error = await #expect(throws: HostError.self) {
            try await withTimeout { try await client.discoverCharacteristics(of: GATTService(uuid: SampleDatabase.heartRate, handleRange: 0x0001...0x0005)) }
        }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func aTruncatedIncludeDeclarationIsAProtocolViolation() async throws {
        var database = FakeAttributeDatabase()
        database.service(0x0001...0x0005, SampleDatabase.heartRate)
        database.add(0x0002, GATTAttributeType.include, [0x20, 0x00, 0x22]) // start, then half an end handle
        let (client, _) = ScriptedATTServer.connect(database: database)
        let error = await #expect(throws: HostError.self) {
            try await withTimeout { try await client.discoverIncludedServices(of: GATTService(uuid: SampleDatabase.heartRate, handleRange: 0x0001...0x0005)) }
        }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func discoversDescriptorsInTheCharacteristicsRange() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(entriesPerResponse: 1))
        let descriptors = try await withTimeout { try await client.discoverDescriptors(of: SampleDatabase.measurementCharacteristic) }
        #expect(descriptors == [GATTDescriptor(uuid: SampleDatabase.cccd, handle: 0x000F),
                                GATTDescriptor(uuid: GATTAttributeType.characteristicUserDescription, handle: 0x0010)])
        let ranges = server.requests.compactMap { pdu -> ClosedRange<UInt16>? in
            guard case let .findInformationRequest(find) = pdu else { return nil }
            return find.startingHandle...find.endingHandle
        }
        // One per page; the last one found is the end of the range, so no third request.
        #expect(ranges == [0x000F...0x0010, 0x0010...0x0010])

        // A characteristic without room for descriptors asks nothing.
        let before = server.sent.count
        let none = try await withTimeout {
            try await client.discoverDescriptors(of: GATTCharacteristic(uuid: SampleDatabase.bodySensorLocation, properties: [.read],
                                                                        declarationHandle: 0x0011, valueHandle: 0x0012, endHandle: 0x0012))
        }
        #expect(none.isEmpty)
        #expect(server.sent.count == before)
    }

    @Test func discoversIncludedServicesWith16And128BitUUIDs() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let included = try await withTimeout { try await client.discoverIncludedServices(of: SampleDatabase.heartRateService) }
        #expect(included == [
            GATTIncludedService(declarationHandle: 0x000B,
                                service: GATTService(uuid: SampleDatabase.battery, isPrimary: false, handleRange: 0x0020...0x0022)),
            GATTIncludedService(declarationHandle: 0x000C,
                                service: GATTService(uuid: SampleDatabase.includedCustom, isPrimary: false, handleRange: 0x0030...0x0032)),
        ])
        // The 128-bit UUID is not in the include declaration: it is read from the service declaration.
        let reads = server.requests.compactMap { pdu -> UInt16? in
            guard case let .readRequest(read) = pdu else { return nil }
            return read.handle
        }
        #expect(reads == [0x0030])
    }

    @Test func discoversTheWholeDatabase() async throws {
        let (client, _) = ScriptedATTServer.connect(database: SampleDatabase.make(entriesPerResponse: 3))
        let database = try await withTimeout { try await client.discoverDatabase() }
        #expect(database.map(\.service) == [SampleDatabase.gapService, SampleDatabase.gattService, SampleDatabase.heartRateService, SampleDatabase.custom])
        let heartRate = try #require(database.first { $0.service == SampleDatabase.heartRateService })
        #expect(heartRate.includedServices.count == 2)
        #expect(heartRate.characteristics.first?.clientConfigurationHandle == 0x000F)
        #expect(database.last?.characteristics.first?.descriptors == [GATTDescriptor(uuid: SampleDatabase.cccd, handle: 0x0016)])
    }
}

// MARK: - Reading and writing

@Suite(.timeLimit(.minutes(1))) struct GATTClientReadWriteTests {
    @Test func readsAShortValue() async throws {
        let (client, _) = ScriptedATTServer.connect(database: SampleDatabase.make())
        #expect(try await withTimeout { try await client.readValue(handle: 0x0003) } == Array("Bluejay".utf8))
    }

    @Test func readsALongValueWithReadBlobUntilAShortPart() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let value = try await withTimeout { try await client.read(SampleDatabase.customValue) }
        #expect(value == SampleDatabase.longValue)
        // 22 + 22 + 16 bytes at the default MTU.
        #expect(server.requests == [
            .readRequest(.init(handle: 0x0015)),
            .readBlobRequest(.init(handle: 0x0015, offset: 22)),
            .readBlobRequest(.init(handle: 0x0015, offset: 44)),
        ])
    }

    @Test(arguments: [ATTErrorCode.attributeNotLong, .invalidOffset])
    func aValueThatFillsTheFirstReadExactlyEndsOnAttributeNotLong(code: ATTErrorCode) async throws {
        var database = SampleDatabase.make()
        database.add(0x0050, SampleDatabase.batteryLevel, Array(repeating: 7, count: 22))
        let (client, server) = ScriptedATTServer.connect(database: database)
        server.script { request in
            if case let .readBlobRequest(blob) = request {
                return .pdu(.errorResponse(.init(requestOpcode: .readBlobRequest, handle: blob.handle, code: code)))
            }
            return .standard
        }
        let value = try await withTimeout { try await client.readLongValue(handle: 0x0050) }
        #expect(value == Array(repeating: 7, count: 22))
        #expect(server.requests.count == 2)
    }

    @Test func aValueLongerThanTheSpecificationAllowsIsStillReadWhole() async throws {
        // Some servers hold values past 512 bytes; the client reads them anyway.
        var database = SampleDatabase.make()
        let long = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 7) }
        database.add(0x0050, SampleDatabase.customCharacteristic, long)
        let (client, server) = ScriptedATTServer.connect(database: database)
        #expect(try await withTimeout { try await client.readLongValue(handle: 0x0050) } == long)
        #expect(server.requests.count == 28, "one Read and 27 Read Blob requests of 22 bytes")
    }

    @Test func aLongReadStopsAtTheLargestOffsetATTCanExpress() async throws {
        // A server that never sends a short part: the client stops once the next offset
        // would not fit in 16 bits, instead of asking forever.
        let (client, server) = ScriptedATTServer.connect()
        server.script { request in
            switch request {
            case .readRequest: return .pdu(.readResponse(.init(value: Array(repeating: 1, count: 22))))
            case .readBlobRequest: return .pdu(.readBlobResponse(.init(partValue: Array(repeating: 2, count: 22))))
            default: return .standard
            }
        }
        let value = try await withTimeout("the long read", .seconds(20)) { try await client.readLongValue(handle: 0x0003) }
        #expect(value.count >= GATTClient.maximumValueLength)
        let offsets = server.requests.compactMap { pdu -> Int? in
            guard case let .readBlobRequest(blob) = pdu else { return nil }
            return Int(blob.offset)
        }
        #expect(offsets.count == (GATTClient.maximumValueLength - 1) / 22)
        #expect(offsets.first == 22)
        #expect((offsets.last ?? .max) < GATTClient.maximumValueLength)
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $1 == $0 + 22 })
    }

    @Test func aShortWriteIsAWriteRequest() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        try await withTimeout { try await client.write([1, 2, 3], to: SampleDatabase.customValue) }
        #expect(server.requests == [.writeRequest(.init(handle: 0x0015, value: [1, 2, 3]))])
        #expect(server.database.value(at: 0x0015) == [1, 2, 3])
    }

    @Test func aLongWriteIsPreparedInPartsThenExecuted() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let value = (0..<40).map { UInt8(100 + $0) }
        try await withTimeout { try await client.write(value, to: SampleDatabase.customValue) }
        // MTU 23: 18 bytes per Prepare Write Request.
        #expect(server.requests == [
            .prepareWriteRequest(.init(handle: 0x0015, offset: 0, partValue: Array(value[0..<18]))),
            .prepareWriteRequest(.init(handle: 0x0015, offset: 18, partValue: Array(value[18..<36]))),
            .prepareWriteRequest(.init(handle: 0x0015, offset: 36, partValue: Array(value[36...]))),
            .executeWriteRequest(.init(flags: .write)),
        ])
        #expect(server.database.value(at: 0x0015) == value)
    }

    @Test func aValueLongerThanTheSpecificationAllowsIsStillWrittenInParts() async throws {
        var database = SampleDatabase.make()
        database.add(0x0050, SampleDatabase.customCharacteristic, [])
        let (client, server) = ScriptedATTServer.connect(database: database)
        let long = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 3) }
        try await withTimeout { try await client.writeValue(long, handle: 0x0050) }
        #expect(server.requests.count == 35, "34 Prepare Write requests of 18 bytes, then Execute")
        #expect(server.database.value(at: 0x0050) == long)
    }

    @Test func aValueLongerThanAnOffsetCanReachIsRefused() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let error = await #expect(throws: HostError.self) {
            try await withTimeout { try await client.writeValue([UInt8](repeating: 0, count: GATTClient.maximumValueLength + 1), handle: 0x0015) }
        }
        guard case .invalidArgument? = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
        #expect(server.sent.count == 0)
    }

    @Test func aWrongEchoCancelsThePreparedWritesAndFails() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.script { request in
            if case let .prepareWriteRequest(prepare) = request, prepare.offset == 18 {
                var corrupted = prepare.partValue
                corrupted[0] ^= 0xFF
                return .pdu(.prepareWriteResponse(.init(handle: prepare.handle, offset: prepare.offset, partValue: corrupted)))
            }
            return .standard
        }
        let value = (0..<40).map { UInt8($0) }
        let error = await #expect(throws: HostError.self) { try await withTimeout { try await client.write(value, to: SampleDatabase.customValue) } }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
        #expect(server.requests.count == 3)
        #expect(server.requests.last == .executeWriteRequest(.init(flags: .cancel)))
        #expect(server.database.value(at: 0x0015) == SampleDatabase.longValue, "nothing was written")
    }

    @Test func anErrorDuringAPreparedWriteCancelsTheQueueAndIsReported() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.script { request in
            if case let .prepareWriteRequest(prepare) = request, prepare.offset > 0 {
                return .pdu(.errorResponse(.init(requestOpcode: .prepareWriteRequest, handle: prepare.handle, code: .prepareQueueFull)))
            }
            return .standard
        }
        await #expect(throws: HostError.att(ATTError(requestOpcode: .prepareWriteRequest, handle: 0x0015, code: .prepareQueueFull))) {
            try await withTimeout { try await client.write(Array(repeating: 1, count: 30), to: SampleDatabase.customValue) }
        }
        #expect(server.requests.last == .executeWriteRequest(.init(flags: .cancel)))
    }

    @Test func writeWithoutResponseReturnsOnceTheControllerTookThePacket() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.holdCompletions()
        let events = AwaitableLog<String>()
        let write = Task {
            try await client.writeWithoutResponse([9, 8, 7], handle: 0x0015)
            events.append("returned")
        }
        let sent = try #require(await server.waitForSent { _ in true })
        #expect(sent == [.writeCommand(.init(handle: 0x0015, value: [9, 8, 7]))])
        events.append("taken")
        server.releaseCompletions()
        try await withTimeout { try await write.value }
        #expect(events.items == ["taken", "returned"])
    }

    @Test func writeWithoutResponseReportsAFailedSend() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.holdCompletions()
        let write = Task { try await client.writeWithoutResponse([1], handle: 0x0015) }
        _ = try #require(await server.waitForSent { _ in true })
        server.releaseCompletions(with: .failure(.connectionClosed(connectionHandle: 0x40)))
        await #expect(throws: HostError.hci(.connectionClosed(connectionHandle: 0x40))) { try await withTimeout { try await write.value } }
    }

    /// A controller that never returns buffer credits once held such a write for ever.
    @Test func writeWithoutResponseWaitingForCreditsEndsAtTheScopesDeadline() async throws {
        let clock = ManualClock()
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), clock: .manual(clock))
        server.holdCompletions()
        let deadline = BluetoothClock.manual(clock).now + .seconds(2)
        let write = Task {
            try await RequestScope.$current.withValue(RequestScope(deadline: deadline)) {
                try await client.writeWithoutResponse([1], handle: 0x0015)
            }
        }
        _ = try #require(await server.waitForSent { _ in true })
        try await clock.waitForSleepingTasks()
        clock.advance(by: .seconds(2))
        await #expect(throws: HostError.deadlineExceeded) { try await withTimeout { try await write.value } }
        // The PDU was handed over: its late completion is harmless.
        server.releaseCompletions()
    }

    @Test func writeWithoutResponseWaitingForCreditsEndsWhenCancelled() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.holdCompletions()
        let write = Task { try await client.writeWithoutResponse([1], handle: 0x0015) }
        _ = try #require(await server.waitForSent { _ in true })
        write.cancel()
        await #expect(throws: HostError.cancelled) { try await withTimeout { try await write.value } }
        server.releaseCompletions()
    }

    @Test func writeWithoutResponseLongerThanOnePDUIsRefused() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        #expect(client.maximumWriteWithoutResponseLength == 20)
        let error = await #expect(throws: HostError.self) {
            try await withTimeout { try await client.writeWithoutResponse(Array(repeating: 0, count: 21), handle: 0x0015) }
        }
        guard case .invalidArgument? = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
        #expect(server.sent.count == 0)
    }

    @Test func anErrorResponseThrowsTheATTErrorNamingItsCode() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.script { request in
            guard case let .readRequest(read) = request else { return .standard }
            return .pdu(.errorResponse(.init(requestOpcode: .readRequest, handle: read.handle, code: .insufficientAuthentication)))
        }
        let error = await #expect(throws: HostError.att(ATTError(requestOpcode: .readRequest, handle: 0x0012, code: .insufficientAuthentication))) {
            try await withTimeout { try await client.readValue(handle: 0x0012) }
        }
        #expect(error.map { "\($0)" }?.contains("Insufficient Authentication") == true)
    }
}

// MARK: - MTU

@Suite(.timeLimit(.minutes(1))) struct GATTClientMTUTests {
    @Test func theMTUIsTheSmallerOfBothAndExchangedOnce() async throws {
        var database = SampleDatabase.make()
        database.serverMTU = 100
        let (client, server) = ScriptedATTServer.connect(database: database)
        #expect(client.mtu == 23)
        #expect(try await withTimeout { try await client.exchangeMTU(247) } == 100)
        #expect(client.mtu == 100)
        #expect(try await withTimeout { try await client.exchangeMTU(517) } == 100)
        #expect(server.requests == [.exchangeMTURequest(.init(clientRxMTU: 247))])
        #expect(client.maximumWriteWithoutResponseLength == 97)
    }

    @Test func theClientsPreferenceLimitsTheMTU() async throws {
        let (client, _) = ScriptedATTServer.connect(database: SampleDatabase.make())
        #expect(try await withTimeout { try await client.exchangeMTU(50) } == 50)
    }

    @Test func anMTUBelowTheMinimumIsRefused() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        await #expect(throws: HostError.self) { try await withTimeout { try await client.exchangeMTU(22) } }
        #expect(server.sent.count == 0)
    }

    @Test func aLargerMTUMakesLongReadsTakeFewerParts() async throws {
        var database = SampleDatabase.make()
        database.serverMTU = 40
        let (client, server) = ScriptedATTServer.connect(database: database)
        _ = try await withTimeout { try await client.exchangeMTU(40) }
        #expect(try await withTimeout { try await client.read(SampleDatabase.customValue) } == SampleDatabase.longValue)
        #expect(server.requests.dropFirst() == [.readRequest(.init(handle: 0x0015)), .readBlobRequest(.init(handle: 0x0015, offset: 39))])
    }
}
