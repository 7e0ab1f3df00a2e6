import BluetoothCore
import BluetoothHCI
import Synchronization
import Testing
@testable import BluetoothHost

/// Subscriptions, notifications, indications and Service Changed, against ``ScriptedATTServer``.
@Suite(.timeLimit(.minutes(1))) struct GATTClientNotificationTests {
    static let notificationOn: [UInt8] = [0x01, 0x00]
    static let indicationOn: [UInt8] = [0x02, 0x00]
    static let off: [UInt8] = [0x00, 0x00]

    func writes(to handle: UInt16, in server: ScriptedATTServer) -> [[UInt8]] {
        server.requests.compactMap(\.writeRequest).filter { $0.handle == handle }.map(\.value)
    }

    /// The last subscriber leaving while its descriptor write was under way once left the peer
    /// notifying nobody: the write took effect after the client had decided nothing was on.
    @Test func aSubscriberGivenUpDuringItsDescriptorWriteLeavesTheDescriptorCleared() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.measurementCharacteristic
        server.script { request in request.writeRequest?.value == Self.notificationOn ? .silence : .standard }
        let subscribing = Task { try await client.subscribe(to: characteristic, clientConfigurationHandle: 0x000F) { _ in } }
        _ = try #require(await server.waitForSent { $0.writeRequest?.value == Self.notificationOn })
        subscribing.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await subscribing.value }
        // The peer applies the late write; with nobody subscribed, the client clears it again.
        server.push(.writeResponse(.init()))
        _ = try #require(await server.waitForSent { $0.writeRequest?.value == Self.off })
        #expect(writes(to: 0x000F, in: server) == [Self.notificationOn, Self.off])
        #expect(await eventually { !client.isSubscribed(valueHandle: characteristic.valueHandle) })
    }

    /// A read begun without a task is reported where its response arrives, in the middle of
    /// the transport's batch: the notifications the peer sent before it in the batch go out
    /// first, those after it at the batch's end.
    @Test func aReadAnsweredInABatchIsReportedAfterTheNotificationsBeforeIt() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.measurementCharacteristic
        let order = Mutex<[String]>([])
        let subscription = try await withTimeout {
            try await client.subscribe(to: characteristic, clientConfigurationHandle: 0x000F) { values in
                order.withLock { $0 += values.map { "notified \($0.value)" } }
            }
        }
        defer { subscription.cancel() }
        server.script { _ in .silence }
        let read = AwaitableLog<[UInt8]>()
        client.startReadLongValue(handle: 0x0003, within: RequestScope()) { started in
            guard case let .finished(value) = started else { return }
            order.withLock { $0.append("read \(value)") }
            read.append(value)
        }
        _ = try #require(await server.waitForSent { $0.opcode == .readRequest })
        var batch = NotificationDeliveries()
        client.bearer.receive(ATTPDU.handleValueNotification(.init(handle: 0x000E, value: [1])).encode()[...], deliveries: &batch)
        client.bearer.receive(ATTPDU.handleValueNotification(.init(handle: 0x000E, value: [2])).encode()[...], deliveries: &batch)
        client.bearer.receive(ATTPDU.readResponse(.init(value: [7])).encode()[...], deliveries: &batch)
        client.bearer.receive(ATTPDU.handleValueNotification(.init(handle: 0x000E, value: [3])).encode()[...], deliveries: &batch)
        batch.flush()
        #expect(await read.wait(forCount: 1) == [[7]])
        #expect(order.withLock { $0 } == ["notified [1]", "notified [2]", "read [7]", "notified [3]"])
    }

    @Test func severalSubscribersShareOneDescriptorWriteAndGetEveryNotificationInOrder() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.measurementCharacteristic
        let (first, firstTask) = collect(try await withTimeout { try await client.subscribe(to: characteristic) })
        let (second, secondTask) = collect(try await withTimeout { try await client.subscribe(to: characteristic) })
        let (all, allTask) = collect(client.notifications())
        defer { allTask.cancel() }
        #expect(writes(to: 0x000F, in: server) == [Self.notificationOn], "written once, for the first subscriber")
        #expect(client.isSubscribed(valueHandle: 0x000E))

        for index in UInt8(1)...5 {
            server.push(.handleValueNotification(.init(handle: 0x000E, value: [index])))
            if index == 3 { server.push(.handleValueNotification(.init(handle: 0x0015, value: [0xEE]))) }
        }
        let expected = (UInt8(1)...5).map { [$0] }
        #expect(try #require(await first.wait(forCount: 5)).compactMap(\.element) == expected)
        #expect(try #require(await second.wait(forCount: 5)).compactMap(\.element) == expected)
        let tapped = try #require(await all.wait(forCount: 6)).compactMap(\.element)
        #expect(tapped.map(\.handle) == [0x000E, 0x000E, 0x000E, 0x0015, 0x000E, 0x000E])
        #expect(tapped.map(\.value)[3] == [0xEE])
        #expect(tapped.allSatisfy { !$0.isIndication })

        // One subscriber leaves: the peer keeps sending for the other.
        firstTask.cancel()
        #expect(await eventually { client.subscriberCount(valueHandle: 0x000E) == 1 })
        #expect(client.isSubscribed(valueHandle: 0x000E))
        server.push(.handleValueNotification(.init(handle: 0x000E, value: [6])))
        #expect(try #require(await second.wait(forCount: 6)).last?.element == [6])
        #expect(writes(to: 0x000F, in: server) == [Self.notificationOn])

        // The last one leaves: the descriptor is cleared, once.
        secondTask.cancel()
        _ = try #require(await server.waitForSent { $0.writeRequest?.value == Self.off })
        _ = try await withTimeout { try await client.readValue(handle: 0x0003) }
        #expect(writes(to: 0x000F, in: server) == [Self.notificationOn, Self.off])
        #expect(!client.isSubscribed(valueHandle: 0x000E))
    }

    @Test func concurrentSubscribersStillWriteTheDescriptorOnce() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.measurementCharacteristic
        let streams = try await withTimeout {
            try await withThrowingTaskGroup(of: ValueStream<[UInt8]>.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await client.subscribe(to: characteristic, clientConfigurationHandle: 0x000F) }
                }
                var streams: [ValueStream<[UInt8]>] = []
                for try await stream in group { streams.append(stream) }
                return streams
            }
        }
        #expect(writes(to: 0x000F, in: server) == [Self.notificationOn])
        let collected = streams.map { collect($0) }
        defer { collected.forEach { $0.1.cancel() } }
        server.push(.handleValueNotification(.init(handle: 0x000E, value: [1])))
        for (values, _) in collected {
            #expect(try #require(await values.wait(forCount: 1)).first?.element == [1])
        }
    }

    @Test func aNewSubscriberAfterEveryoneLeftWritesTheDescriptorAgain() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.measurementCharacteristic
        let (_, firstTask) = collect(try await withTimeout { try await client.subscribe(to: characteristic, clientConfigurationHandle: 0x000F) })
        firstTask.cancel()
        _ = try #require(await server.waitForSent { $0.writeRequest?.value == Self.off })
        let (values, task) = collect(try await withTimeout { try await client.subscribe(to: characteristic, clientConfigurationHandle: 0x000F) })
        defer { task.cancel() }
        #expect(writes(to: 0x000F, in: server) == [Self.notificationOn, Self.off, Self.notificationOn])
        server.push(.handleValueNotification(.init(handle: 0x000E, value: [1])))
        #expect(try #require(await values.wait(forCount: 1)).first?.element == [1])
    }

    @Test func indicationsAreDeliveredAndConfirmed() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let (values, task) = collect(try await withTimeout {
            try await client.subscribe(to: SampleDatabase.customValue, preferIndications: true)
        })
        defer { task.cancel() }
        let (all, allTask) = collect(client.notifications())
        defer { allTask.cancel() }
        #expect(writes(to: 0x0016, in: server) == [Self.indicationOn])

        server.push(.handleValueIndication(.init(handle: 0x0015, value: [0x51])))
        let confirmations = try #require(await server.waitForSent { $0 == .handleValueConfirmation(.init()) })
        #expect(confirmations.last == .handleValueConfirmation(.init()))
        #expect(try #require(await values.wait(forCount: 1)).first?.element == [0x51])
        let tapped = try #require(await all.wait(forCount: 1)).first?.element
        #expect(tapped == GATTNotification(handle: 0x0015, value: [0x51], isIndication: true))

        // An indication nobody subscribed to is confirmed too.
        server.push(.handleValueIndication(.init(handle: 0x0012, value: [0x52])))
        _ = try #require(await server.waitForSent(count: 2) { $0 == .handleValueConfirmation(.init()) })
    }

    @Test func unsubscribeEndsEveryStreamAndClearsTheDescriptor() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let characteristic = SampleDatabase.customValue
        let (first, firstTask) = collect(try await withTimeout { try await client.subscribe(to: characteristic) })
        let (second, secondTask) = collect(try await withTimeout { try await client.subscribe(to: characteristic) })
        defer { firstTask.cancel(); secondTask.cancel() }
        try await withTimeout { try await client.unsubscribe(from: characteristic) }
        #expect(try #require(await first.wait(forCount: 1)).last?.isEnd == true)
        #expect(try #require(await second.wait(forCount: 1)).last?.isEnd == true)
        #expect(first.items.first?.error == nil)
        _ = try await withTimeout { try await client.readValue(handle: 0x0003) }
        #expect(writes(to: 0x0016, in: server) == [Self.notificationOn, Self.off])
        #expect(!client.isSubscribed(valueHandle: 0x0015))
    }

    @Test func aCharacteristicThatNeitherNotifiesNorIndicatesCannotBeSubscribedTo() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        let location = GATTCharacteristic(uuid: SampleDatabase.bodySensorLocation, properties: [.read], declarationHandle: 0x0011,
                                          valueHandle: 0x0012, endHandle: 0x0012)
        let error = await #expect(throws: HostError.self) { try await withTimeout { _ = try await client.subscribe(to: location) } }
        guard case .unsupported? = error else {
            Issue.record("expected unsupported, got \(String(describing: error))")
            return
        }
        #expect(server.sent.count == 0)
    }

    @Test func aRefusedDescriptorWriteFailsTheSubscription() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        server.script { request in
            guard case let .writeRequest(write) = request else { return .standard }
            return .pdu(.errorResponse(.init(requestOpcode: .writeRequest, handle: write.handle, code: .writeNotPermitted)))
        }
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: 0x000F, code: .writeNotPermitted))) {
            try await withTimeout { _ = try await client.subscribe(to: SampleDatabase.measurementCharacteristic) }
        }
        #expect(!client.isSubscribed(valueHandle: 0x000E))
        #expect(await eventually { client.subscriberCount(valueHandle: 0x000E) == 0 })
    }

    @Test func serviceChangedInvalidatesTheCachedServicesInItsRange() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        _ = try await withTimeout { try await client.discoverAllPrimaryServices() }
        #expect(try await withTimeout { try await client.enableServiceChangedIndications() })
        #expect(writes(to: 0x0009, in: server) == [Self.indicationOn])
        let (changes, changesTask) = collect(client.serviceChanges())
        defer { changesTask.cancel() }

        let before = server.sent.count
        #expect(try await withTimeout { try await client.enableServiceChangedIndications() })
        #expect(server.sent.count == before, "already enabled")

        // The peer changed handles 0x000C...0x0012: the heart rate service is gone from the cache.
        server.push(.handleValueIndication(.init(handle: 0x0008, value: [0x0C, 0x00, 0x12, 0x00])))
        let change = try #require(await changes.wait(forCount: 1)).first?.element
        #expect(change == GATTServiceChange(affectedHandles: 0x000C...0x0012, invalidatedServices: [SampleDatabase.heartRateService]))
        #expect(client.cachedServices == [SampleDatabase.gapService, SampleDatabase.gattService, SampleDatabase.custom])
        _ = try #require(await server.waitForSent { $0 == .handleValueConfirmation(.init()) })

        // A malformed value is ignored (and still confirmed).
        server.push(.handleValueIndication(.init(handle: 0x0008, value: [0x12, 0x00, 0x0C, 0x00])))
        _ = try #require(await server.waitForSent(count: 2) { $0 == .handleValueConfirmation(.init()) })
        server.push(.handleValueIndication(.init(handle: 0x0008, value: [0x01, 0x00, 0x05, 0x00])))
        let changes2 = try #require(await changes.wait(forCount: 2)).compactMap(\.element)
        #expect(changes2.last?.invalidatedServices == [SampleDatabase.gapService])
    }

    @Test func aPeerWithoutServiceChangedReportsFalse() async throws {
        var database = FakeAttributeDatabase()
        database.service(0x0001...0x0003, GATTAttributeType.gapService)
        database.characteristic(0x0002, GATTAttributeType.deviceName, [.read], value: [0x41])
        let (client, _) = ScriptedATTServer.connect(database: database)
        #expect(try await withTimeout { try await client.enableServiceChangedIndications() } == false)
    }
}
