import BluetoothCore
@testable import BluetoothHost
import Synchronization
import Testing

@Suite("GATT server: reads", .timeLimit(.minutes(1)))
struct GATTServerReadTests {
    @Test("Read cuts to MTU - 1; our client's long read gets the rest with Read Blob")
    func shortAndLongReads() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let short = try #require(published.characteristic(TestDatabase.short))
        let long = try #require(published.characteristic(TestDatabase.long))
        #expect(try await client.readValue(handle: short.valueHandle) == [1, 2, 3])
        #expect(try await client.readValue(handle: long.valueHandle) == Array(TestDatabase.longValue.prefix(22)))
        #expect(try await client.readLongValue(handle: long.valueHandle) == TestDatabase.longValue)
        // After an MTU exchange a single read carries up to 516 octets.
        #expect(try await client.exchangeMTU(517) == 517)
        #expect(try await client.readValue(handle: long.valueHandle) == TestDatabase.longValue)
    }

    @Test("Reading an unknown handle is Invalid Handle, an unreadable one Read Not Permitted")
    func readErrors() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let raw = harness.rawBearer()
        let unknown = try await raw.expectError(.readRequest(.init(handle: 0x0F00)))
        #expect(unknown.code == .invalidHandle)
        #expect(unknown.handle == 0x0F00)
        let zero = try await raw.expectError(.readRequest(.init(handle: 0x0000)))
        #expect(zero.code == .invalidHandle)
        let writeOnly = try #require(published.characteristic(TestDatabase.writeOnly))
        let refused = try await raw.expectError(.readRequest(.init(handle: writeOnly.valueHandle)))
        #expect(refused.code == .readNotPermitted)
        #expect(refused.handle == writeOnly.valueHandle)
        let blob = try await raw.expectError(.readBlobRequest(.init(handle: writeOnly.valueHandle, offset: 0)))
        #expect(blob.code == .readNotPermitted)
    }

    @Test("Read Blob: Invalid Offset past the end, empty at the end, Attribute Not Long for short values")
    func readBlobRules() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let raw = harness.rawBearer()
        let long = try #require(published.characteristic(TestDatabase.long)).valueHandle
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle

        #expect(try await raw.request(.readBlobRequest(.init(handle: long, offset: 22)))
            == .readBlobResponse(.init(partValue: Array(TestDatabase.longValue[22..<44]))))
        #expect(try await raw.request(.readBlobRequest(.init(handle: long, offset: 290)))
            == .readBlobResponse(.init(partValue: Array(TestDatabase.longValue[290...]))))
        #expect(try await raw.request(.readBlobRequest(.init(handle: long, offset: 300))) == .readBlobResponse(.init(partValue: [])))
        let past = try await raw.expectError(.readBlobRequest(.init(handle: long, offset: 301)))
        #expect(past.code == .invalidOffset)
        #expect(past.handle == long)

        #expect(try await raw.request(.readBlobRequest(.init(handle: short, offset: 0))) == .readBlobResponse(.init(partValue: [1, 2, 3])))
        let notLong = try await raw.expectError(.readBlobRequest(.init(handle: short, offset: 1)))
        #expect(notLong.code == .attributeNotLong)
        let shortPast = try await raw.expectError(.readBlobRequest(.init(handle: short, offset: 4)))
        #expect(shortPast.code == .invalidOffset)
        let unknown = try await raw.expectError(.readBlobRequest(.init(handle: 0x0F00, offset: 0)))
        #expect(unknown.code == .invalidHandle)
    }

    @Test("Read Multiple concatenates, cuts to MTU - 1 and names the first bad handle")
    func readMultiple() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        let long = try #require(published.characteristic(TestDatabase.long)).valueHandle
        let writeOnly = try #require(published.characteristic(TestDatabase.writeOnly)).valueHandle
        let client = harness.connectClient()
        #expect(try await client.readMultiple(handles: [short, readOnly]) == [1, 2, 3, 0x42])
        #expect(try await client.readMultiple(handles: [readOnly, long]) == [0x42] + TestDatabase.longValue.prefix(21))

        let raw = harness.rawBearer()
        let invalid = try await raw.expectError(.readMultipleRequest(.init(handles: [short, 0x0F00, writeOnly])))
        #expect(invalid.code == .invalidHandle)
        #expect(invalid.handle == 0x0F00)
        let refused = try await raw.expectError(.readMultipleRequest(.init(handles: [short, writeOnly])))
        #expect(refused.code == .readNotPermitted)
        #expect(refused.handle == writeOnly)
    }

    @Test("Read Multiple Variable gives full lengths and cuts the last value at MTU - 1")
    func readMultipleVariable() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let long = try #require(published.characteristic(TestDatabase.long)).valueHandle
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        let raw = harness.rawBearer()
        guard case let .readMultipleVariableResponse(response) = try await raw.request(
            .readMultipleVariableRequest(.init(handles: [short, long, readOnly]))) else {
            Issue.record("expected a Read Multiple Variable Response")
            return
        }
        // 22 octets: 2 + 3 for the short value, then 2 + 15 of the long one; no room for the third.
        #expect(response.values == [
            .init(valueLength: 3, value: [1, 2, 3]),
            .init(valueLength: 300, value: Array(TestDatabase.longValue.prefix(15))),
        ])
        #expect(response.values.last?.isTruncated == true)
        let client = harness.connectClient()
        _ = try await client.exchangeMTU(517)
        #expect(try await client.readMultipleVariable(handles: [short, long, readOnly]) == [[1, 2, 3], TestDatabase.longValue, [0x42]])
    }

    @Test("A read handler answers instead of the stored value, sees the offset, and may refuse")
    func readHandler() async throws {
        let harness = await ServerHarness()
        let seen = Mutex<[GATTReadRequest]>([])
        let dynamic = BluetoothUUID(UInt16(0xAA10))
        let refusing = BluetoothUUID(UInt16(0xAA11))
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: dynamic, properties: .read, value: [0], onRead: { request in
                seen.withLock { $0.append(request) }
                return .value((0..<40).map { UInt8($0) })
            }),
            GATTCharacteristicDefinition(uuid: refusing, properties: .read, onRead: { _ in .error(.insufficientAuthorization) }),
        ]))
        let client = harness.connectClient(handle: 0x0077)
        let handle = try #require(published.characteristic(dynamic)).valueHandle
        #expect(try await client.readLongValue(handle: handle) == (0..<40).map { UInt8($0) })
        let requests = seen.withLock { $0 }
        #expect(requests.map(\.offset) == [0, 22])
        #expect(requests.allSatisfy { $0.connectionHandle == 0x0077 && $0.uuid == dynamic && $0.handle == handle })

        let raw = harness.rawBearer()
        let refusingHandle = try #require(published.characteristic(refusing)).valueHandle
        let error = try await raw.expectError(.readRequest(.init(handle: refusingHandle)))
        #expect(error.code == .insufficientAuthorization)
    }

    @Test("A read handler that does not answer in time gets Unlikely Error")
    func slowReadHandler() async throws {
        // The handler never answers; the server's clock is moved by hand past its limit.
        let clock = ManualClock()
        let handlerCalled = TestGate()
        let harness = await ServerHarness(settings: GATTServerSettings(), clock: .manual(clock))
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .read, onRead: { _ in
                try? await handlerCalled.wait()
                return .value([1])
            }),
        ]))
        let raw = harness.rawBearer()
        let handle = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let answer = Task { try await raw.expectError(.readRequest(.init(handle: handle))) }
        try await handlerCalled.waitForArrivals(1)
        clock.advance(by: GATTServerSettings().handlerTimeout)
        let error = try await answer.value
        #expect(error.code == .unlikelyError)
    }

    @Test("Attributes that need encryption are refused with Insufficient Authentication on an unencrypted link with no key")
    func encryptionRequired() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: [.read, .write],
                                         permissions: [.readEncryptionRequired, .writeEncryptionRequired], value: [1]),
        ]))
        let raw = harness.rawBearer()
        let handle = try #require(published.characteristic(TestDatabase.short)).valueHandle
        #expect(try await raw.expectError(.readRequest(.init(handle: handle))).code == .insufficientAuthentication)
        #expect(try await raw.expectError(.writeRequest(.init(handle: handle, value: [2]))).code == .insufficientAuthentication)
    }

    @Test("Exchange MTU: the server answers its receive MTU; the bearer uses the smaller, at least 23, once")
    func exchangeMTU() async throws {
        let harness = await ServerHarness()
        let events = await harness.server.events()
        let raw = harness.rawBearer(handle: 0x0050)
        #expect(try await raw.request(.exchangeMTURequest(.init(clientRxMTU: 100))) == .exchangeMTUResponse(.init(serverRxMTU: 517)))
        #expect(await harness.server.mtu(connectionHandle: 0x0050) == 100)
        // Only the first exchange counts (Core 6.0, Vol 3, Part F, 3.4.2.1).
        #expect(try await raw.request(.exchangeMTURequest(.init(clientRxMTU: 200))) == .exchangeMTUResponse(.init(serverRxMTU: 517)))
        #expect(await harness.server.mtu(connectionHandle: 0x0050) == 100)
        var iterator = events.makeAsyncIterator()
        let next = await iterator.next()
        #expect(next == .mtuExchanged(connectionHandle: 0x0050, mtu: 100))

        let small = harness.rawBearer(handle: 0x0051)
        _ = try await small.request(.exchangeMTURequest(.init(clientRxMTU: 10)))
        #expect(await harness.server.mtu(connectionHandle: 0x0051) == 23)
    }
}
