import BluetoothCore
@testable import BluetoothHost
import Synchronization
import Testing

@Suite("GATT server: writes", .timeLimit(.minutes(1)))
struct GATTServerWriteTests {
    @Test("A write is stored and read back; errors for unknown, read-only and too long")
    func writeRequest() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        try await client.writeValue([9, 8], handle: short)
        #expect(try await client.readValue(handle: short) == [9, 8])
        #expect(await harness.server.value(forHandle: short) == [9, 8])

        let raw = harness.rawBearer()
        let unknown = try await raw.expectError(.writeRequest(.init(handle: 0x0F00, value: [1])))
        #expect(unknown.code == .invalidHandle)
        #expect(unknown.handle == 0x0F00)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        let refused = try await raw.expectError(.writeRequest(.init(handle: readOnly, value: [1])))
        #expect(refused.code == .writeNotPermitted)
        #expect(refused.handle == readOnly)
        let declaration = try await raw.expectError(.writeRequest(.init(handle: published.handleRange.lowerBound, value: [1])))
        #expect(declaration.code == .writeNotPermitted)

        let bounded = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.battery, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.batteryLevel, properties: .write, maximumValueLength: 4),
        ]))
        let boundedHandle = try #require(bounded.characteristics.first).valueHandle
        let tooLong = try await raw.expectError(.writeRequest(.init(handle: boundedHandle, value: [1, 2, 3, 4, 5])))
        #expect(tooLong.code == .invalidAttributeValueLength)
        #expect(try await raw.request(.writeRequest(.init(handle: boundedHandle, value: [1, 2, 3, 4]))) == .writeResponse(.init()))
    }

    @Test("A write handler accepts or answers the error it chooses; a refused value is not stored")
    func writeHandler() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let checked = try #require(published.characteristic(TestDatabase.checked)).valueHandle
        try await client.writeValue([5, 6], handle: checked)
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: checked, code: TestDatabase.wrongLengthError))) {
            try await client.writeValue([1, 2, 3], handle: checked)
        }
        #expect(try await client.readValue(handle: checked) == [5, 6])
    }

    @Test("Write Command is stored and never answered, not even when refused")
    func writeCommand() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let writeOnly = try #require(published.characteristic(TestDatabase.writeOnly)).valueHandle
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        let raw = harness.rawBearer()
        raw.send(.writeCommand(.init(handle: writeOnly, value: [0x77])))
        raw.send(.writeCommand(.init(handle: readOnly, value: [0x00])))
        raw.send(.writeCommand(.init(handle: 0x0F00, value: [0x00])))
        // The next thing the server sends answers this read: nothing answered the commands.
        #expect(try await raw.request(.readRequest(.init(handle: readOnly))) == .readResponse(.init(value: [0x42])))
        #expect(await harness.server.value(forHandle: writeOnly) == [0x77])
        #expect(raw.recorder.all.count == 1)
    }

    /// The server once took a Write Request on a characteristic that declares only Write
    /// Without Response, and the reverse.
    @Test("A characteristic value takes only the writes its properties declare")
    func writesFollowTheProperties() async throws {
        let harness = await ServerHarness()
        let commandsOnly = BluetoothUUID(UInt16(0xAB01)), requestsOnly = BluetoothUUID(UInt16(0xAB02))
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: commandsOnly, properties: [.read, .writeWithoutResponse], value: [0]),
            GATTCharacteristicDefinition(uuid: requestsOnly, properties: [.read, .write], value: [0]),
        ]))
        let commandsHandle = try #require(published.characteristic(commandsOnly)).valueHandle
        let requestsHandle = try #require(published.characteristic(requestsOnly)).valueHandle
        let raw = harness.rawBearer()
        let refused = try await raw.expectError(.writeRequest(.init(handle: commandsHandle, value: [1])))
        #expect(refused.code == .writeNotPermitted)
        let prepared = try await raw.expectError(.prepareWriteRequest(.init(handle: commandsHandle, offset: 0, partValue: [1])))
        #expect(prepared.code == .writeNotPermitted)
        raw.send(.writeCommand(.init(handle: requestsHandle, value: [2])))
        raw.send(.writeCommand(.init(handle: commandsHandle, value: [3])))
        // The reads come after the commands: the first was ignored, the second stored.
        #expect(try await raw.request(.readRequest(.init(handle: requestsHandle))) == .readResponse(.init(value: [0])))
        #expect(try await raw.request(.readRequest(.init(handle: commandsHandle))) == .readResponse(.init(value: [3])))
    }

    @Test("A long write of more than 65535 bytes is refused before anything is sent")
    func longWriteLimit() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let long = try #require(published.characteristic(TestDatabase.long)).valueHandle
        await #expect(throws: HostError.invalidArgument("a long write carries at most 65535 bytes, not 70000")) {
            try await client.writeLongValue([UInt8](repeating: 1, count: 70_000), handle: long)
        }
        #expect(try await client.readValue(handle: long).count < 70_000, "the bearer still works")
    }

    @Test("Handlers see how a value arrived")
    func writeKinds() async throws {
        let harness = await ServerHarness()
        let kinds = Mutex<[GATTWriteRequest.Kind]>([])
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: [.write, .writeWithoutResponse], onWrite: { request in
                kinds.withLock { $0.append(request.kind) }
                return .success
            }),
        ]))
        let client = harness.connectClient()
        let handle = try #require(published.characteristics.first).valueHandle
        try await client.writeValue([1], handle: handle)
        try await client.writeWithoutResponse([2], handle: handle)
        try await client.writeLongValue(Array(repeating: 3, count: 40), handle: handle)
        // Requests and commands are served in arrival order, so the command was handled before the long write.
        #expect(kinds.withLock { $0 } == [.request, .command, .preparedWrite])
        #expect(await harness.server.value(forHandle: handle) == Array(repeating: 3, count: 40))
    }
}

@Suite("GATT server: prepared writes", .timeLimit(.minutes(1)))
struct GATTServerPreparedWriteTests {
    @Test("Our client's long write goes through prepared writes and is read back whole")
    func longWrite() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let client = harness.connectClient()
        let long = try #require(published.characteristic(TestDatabase.long)).valueHandle
        let value = (0..<512).map { UInt8(255 - $0 % 256) }
        try await client.writeLongValue(value, handle: long)
        #expect(try await client.readLongValue(handle: long) == value)
    }

    @Test("Prepare Write echoes the part; Execute writes the parts in order, each offset into the value so far")
    func executeAssemblesParts() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let raw = harness.rawBearer()
        let part = ATTPrepareWriteRequest(handle: short, offset: 0, partValue: [0xA, 0xB])
        #expect(try await raw.request(.prepareWriteRequest(part)) == .prepareWriteResponse(.init(echoing: part)))
        _ = try await raw.request(.prepareWriteRequest(.init(handle: short, offset: 2, partValue: [0xC])))
        _ = try await raw.request(.prepareWriteRequest(.init(handle: short, offset: 1, partValue: [0xD, 0xE])))
        // Not written until executed.
        #expect(await harness.server.value(forHandle: short) == [1, 2, 3])
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        #expect(await harness.server.value(forHandle: short) == [0xA, 0xD, 0xE])
    }

    @Test("Execute with the cancel flag discards the queue")
    func cancel() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let raw = harness.rawBearer()
        _ = try await raw.request(.prepareWriteRequest(.init(handle: short, offset: 0, partValue: [0xFF])))
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .cancel))) == .executeWriteResponse(.init()))
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        #expect(await harness.server.value(forHandle: short) == [1, 2, 3])
    }

    @Test("A full prepare queue answers Prepare Queue Full")
    func queueFull() async throws {
        var settings = GATTServerSettings()
        settings.maximumPreparedWrites = 3
        let harness = await ServerHarness(settings: settings)
        let published = try await harness.server.addService(TestDatabase.definition)
        let long = try #require(published.characteristic(TestDatabase.long)).valueHandle
        let raw = harness.rawBearer()
        for index in 0..<3 {
            let offset = UInt16(index * 18)
            _ = try await raw.request(.prepareWriteRequest(.init(handle: long, offset: offset, partValue: Array(repeating: 1, count: 18))))
        }
        let full = try await raw.expectError(.prepareWriteRequest(.init(handle: long, offset: 54, partValue: [1])))
        #expect(full.code == .prepareQueueFull)
        #expect(full.handle == long)
        // The queue as it was is still written.
        _ = try await raw.request(.executeWriteRequest(.init(flags: .write)))
        #expect(await harness.server.value(forHandle: long) == Array(repeating: 1, count: 54))
    }

    @Test("Offsets and lengths are checked at execution: Invalid Offset, Invalid Attribute Value Length; the queue is cleared")
    func executeErrors() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .write, value: [1, 2], maximumValueLength: 4),
        ]))
        let handle = try #require(published.characteristics.first).valueHandle
        let raw = harness.rawBearer()
        _ = try await raw.request(.prepareWriteRequest(.init(handle: handle, offset: 3, partValue: [9])))
        let offset = try await raw.expectError(.executeWriteRequest(.init(flags: .write)))
        #expect(offset.code == .invalidOffset)
        #expect(offset.handle == handle)
        // Cleared: executing again writes nothing.
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        #expect(await harness.server.value(forHandle: handle) == [1, 2])

        _ = try await raw.request(.prepareWriteRequest(.init(handle: handle, offset: 0, partValue: [1, 2, 3])))
        _ = try await raw.request(.prepareWriteRequest(.init(handle: handle, offset: 3, partValue: [4, 5])))
        let length = try await raw.expectError(.executeWriteRequest(.init(flags: .write)))
        #expect(length.code == .invalidAttributeValueLength)
        #expect(await harness.server.value(forHandle: handle) == [1, 2])
    }

    @Test("Prepare Write checks the handle and the permission at once")
    func prepareErrors() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let readOnly = try #require(published.characteristic(TestDatabase.readOnly)).valueHandle
        let raw = harness.rawBearer()
        let unknown = try await raw.expectError(.prepareWriteRequest(.init(handle: 0x0F00, offset: 0, partValue: [1])))
        #expect(unknown.code == .invalidHandle)
        let refused = try await raw.expectError(.prepareWriteRequest(.init(handle: readOnly, offset: 0, partValue: [1])))
        #expect(refused.code == .writeNotPermitted)
        #expect(refused.handle == readOnly)
    }

    @Test("A reliable write of two characteristics runs their handlers in order; a refusal names its handle")
    func reliableWrite() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let checked = try #require(published.characteristic(TestDatabase.checked)).valueHandle
        let raw = harness.rawBearer()
        _ = try await raw.request(.prepareWriteRequest(.init(handle: short, offset: 0, partValue: [4])))
        _ = try await raw.request(.prepareWriteRequest(.init(handle: checked, offset: 0, partValue: [7, 7])))
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        #expect(await harness.server.value(forHandle: short) == [4])
        #expect(await harness.server.value(forHandle: checked) == [7, 7])

        _ = try await raw.request(.prepareWriteRequest(.init(handle: checked, offset: 0, partValue: [1, 2, 3])))
        let refused = try await raw.expectError(.executeWriteRequest(.init(flags: .write)))
        #expect(refused.code == TestDatabase.wrongLengthError)
        #expect(refused.handle == checked)
    }
}

@Suite("GATT server: a client that sends faster than it is answered", .timeLimit(.minutes(1)))
struct GATTServerInboundLimitTests {
    @Test("Past maximumQueuedPDUs a connection's PDUs are dropped and counted; the server carries on")
    func floodIsBounded() async throws {
        var settings = GATTServerSettings()
        settings.maximumQueuedPDUs = 4
        let handlerCalled = TestGate()
        let writes = AwaitableLog<(UInt16, [UInt8])>()
        let harness = await ServerHarness(settings: settings)
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: .read, onRead: { _ in
                try? await handlerCalled.wait()
                return .value([1])
            }),
            GATTCharacteristicDefinition(uuid: TestDatabase.writeOnly, properties: .writeWithoutResponse, value: [0], onWrite: { request in
                writes.append((request.connectionHandle, request.value))
                return .success
            }),
        ]))
        let slow = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let sink = try #require(published.characteristic(TestDatabase.writeOnly)).valueHandle
        let raw = harness.rawBearer()
        // A read the server is busy with, then a flood of Write Commands behind it.
        raw.send(.readRequest(.init(handle: slow)))
        try await handlerCalled.waitForArrivals(1)
        for value in UInt8(1)...10 { raw.send(.writeCommand(.init(handle: sink, value: [value]))) }
        #expect(harness.server.droppedPDUCount == 6)
        // Another connection is not limited by this one's queue.
        let other = harness.rawBearer(handle: 0x0050)
        other.send(.writeCommand(.init(handle: sink, value: [0xEE])))
        #expect(harness.server.droppedPDUCount == 6)

        handlerCalled.open()
        let answer = try #require(await raw.recorder.next())
        #expect(try ATTPDU.decode(answer) == .readResponse(.init(value: [1])))
        // The four queued writes were applied in order, and the connection is served again.
        let after = try await raw.request(.readRequest(.init(handle: slow)))
        #expect(after == .readResponse(.init(value: [1])))
        let applied = try #require(await writes.wait(forCount: 5))
        #expect(applied.filter { $0.0 == 0x0041 }.map(\.1) == [[1], [2], [3], [4]])
        #expect(applied.filter { $0.0 == 0x0050 }.map(\.1) == [[0xEE]])
        #expect(harness.server.memoryBearer(0x0041).serverQueue.pendingCount == 0)
    }
}
