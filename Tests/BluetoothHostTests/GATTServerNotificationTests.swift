import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("GATT server: notifications and indications", .timeLimit(.minutes(1)))
struct GATTServerNotificationTests {
    private func streaming(_ harness: ServerHarness) async throws -> GATTPublishedCharacteristic {
        let published = try await harness.server.addService(TestDatabase.definition)
        return try #require(published.characteristic(TestDatabase.streaming))
    }

    private func discovered(_ characteristic: GATTPublishedCharacteristic) -> GATTCharacteristic {
        GATTCharacteristic(uuid: characteristic.uuid, properties: characteristic.properties, declarationHandle: characteristic.declarationHandle,
                           valueHandle: characteristic.valueHandle, endHandle: characteristic.valueHandle + 1)
    }

    @Test("Notifications reach a subscribed client in order, and only while it is subscribed")
    func notifications() async throws {
        let harness = await ServerHarness()
        let characteristic = try await streaming(harness)
        let client = harness.connectClient()
        var values = try await client.subscribe(to: discovered(characteristic)).makeAsyncIterator()
        for index in 1...5 {
            let update = try await harness.server.updateValue([UInt8(index)], forHandle: characteristic.valueHandle)
            #expect(update.notified == [0x0040])
            #expect(update.reachedAllSubscribers)
        }
        for index in 1...5 {
            let next = try await values.next()
            #expect(next == [UInt8(index)])
        }
        #expect(await harness.server.value(forHandle: characteristic.valueHandle) == [5])

        try await client.unsubscribe(from: discovered(characteristic))
        let after = try await harness.server.updateValue([9], forHandle: characteristic.valueHandle)
        #expect(!after.hasSubscribers)
    }

    @Test("Indications go one at a time: the next waits for the confirmation")
    func indicationsWaitForConfirmation() async throws {
        let harness = await ServerHarness()
        let characteristic = try await streaming(harness)
        let configuration = try #require(characteristic.clientConfigurationHandle)
        let raw = harness.rawBearer()
        #expect(try await raw.request(.writeRequest(.init(handle: configuration, value: [0x02, 0x00]))) == .writeResponse(.init()))
        for value: UInt8 in [1, 2, 3] {
            let update = try await harness.server.updateValue([value], forHandle: characteristic.valueHandle)
            #expect(update.indicated == [raw.handle])
        }
        for value: UInt8 in [1, 2, 3] {
            let indication = try #require(await raw.recorder.next())
            #expect(try ATTPDU.decode(indication) == .handleValueIndication(.init(handle: characteristic.valueHandle, value: [value])))
            // Nothing more until confirmed.
            #expect(await raw.recorder.next(timeout: .milliseconds(100)) == nil)
            raw.send(.handleValueConfirmation(.init()))
        }
    }

    @Test("Our client receives indications in order and confirms each; indicate() returns on confirmation")
    func indicationsToOurClient() async throws {
        let harness = await ServerHarness()
        let characteristic = try await streaming(harness)
        let client = harness.connectClient()
        var values = try await client.subscribe(to: discovered(characteristic), preferIndications: true).makeAsyncIterator()
        for index in 0..<20 { _ = try await harness.server.updateValue([UInt8(index)], forHandle: characteristic.valueHandle) }
        for index in 0..<20 {
            let next = try await values.next()
            #expect(next == [UInt8(index)])
        }
        try await harness.server.indicate([0xEE], forHandle: characteristic.valueHandle, connectionHandle: 0x0040)
        let next = try await values.next()
        #expect(next == [0xEE])
    }

    @Test("An unconfirmed indication times out, and the bearer gets no more")
    func indicationTimeout() async throws {
        var settings = GATTServerSettings()
        settings.indicationTimeout = .milliseconds(100)
        let harness = await ServerHarness(settings: settings)
        let characteristic = try await streaming(harness)
        let raw = harness.rawBearer()
        _ = try await raw.request(.writeRequest(.init(handle: try #require(characteristic.clientConfigurationHandle), value: [0x02, 0x00])))
        await #expect(throws: GATTServerError.indicationTimeout(connectionHandle: raw.handle)) {
            try await harness.server.indicate([1], forHandle: characteristic.valueHandle, connectionHandle: raw.handle)
        }
        let later = try await harness.server.updateValue([2], forHandle: characteristic.valueHandle)
        #expect(later.indicated.isEmpty)
    }

    @Test("Notifications and indications are cut to MTU - 3")
    func truncation() async throws {
        let harness = await ServerHarness()
        let characteristic = try await streaming(harness)
        let raw = harness.rawBearer()
        _ = try await raw.request(.writeRequest(.init(handle: try #require(characteristic.clientConfigurationHandle), value: [0x01, 0x00])))
        let value = (0..<40).map { UInt8($0) }
        _ = try await harness.server.updateValue(value, forHandle: characteristic.valueHandle)
        let notification = try #require(await raw.recorder.next())
        #expect(try ATTPDU.decode(notification) == .handleValueNotification(.init(handle: characteristic.valueHandle, value: Array(value.prefix(20)))))
        // The whole value is stored and readable with a long read.
        #expect(await harness.server.value(forHandle: characteristic.valueHandle) == value)
    }

    @Test("Each client has its own Client Characteristic Configuration")
    func perConnectionConfiguration() async throws {
        let harness = await ServerHarness()
        let characteristic = try await streaming(harness)
        let configuration = try #require(characteristic.clientConfigurationHandle)
        let subscriber = harness.rawBearer(handle: 0x0041)
        let bystander = harness.rawBearer(handle: 0x0042)
        _ = try await subscriber.request(.writeRequest(.init(handle: configuration, value: [0x01, 0x00])))
        #expect(try await subscriber.request(.readRequest(.init(handle: configuration))) == .readResponse(.init(value: [0x01, 0x00])))
        #expect(try await bystander.request(.readRequest(.init(handle: configuration))) == .readResponse(.init(value: [0x00, 0x00])))
        let update = try await harness.server.updateValue([3], forHandle: characteristic.valueHandle)
        #expect(update.notified == [0x0041])
        #expect(await subscriber.recorder.next() != nil)
        #expect(await bystander.recorder.next(timeout: .milliseconds(100)) == nil)
        let subscriptions = await harness.server.subscriptions(forHandle: characteristic.valueHandle)
        #expect(subscriptions.map(\.connectionHandle) == [0x0041])
        #expect(subscriptions.first?.isNotifying == true)
    }

    @Test("Client Characteristic Configuration writes: two octets, only the bits the properties allow")
    func configurationWrites() async throws {
        let harness = await ServerHarness()
        let battery = try await harness.server.addService(TestDatabase.batteryDefinition)
        let configuration = try #require(battery.characteristics.first?.clientConfigurationHandle)
        let raw = harness.rawBearer()
        #expect(try await raw.expectError(.writeRequest(.init(handle: configuration, value: [0x01]))).code == .invalidAttributeValueLength)
        #expect(try await raw.expectError(.writeRequest(.init(handle: configuration, value: [0x01, 0x00, 0x00]))).code
            == .invalidAttributeValueLength)
        // Battery Level notifies but does not indicate.
        #expect(try await raw.expectError(.writeRequest(.init(handle: configuration, value: [0x02, 0x00]))).code == .cccdImproperlyConfigured)
        #expect(try await raw.request(.writeRequest(.init(handle: configuration, value: [0x01, 0x00]))) == .writeResponse(.init()))
    }

    @Test("Subscription changes are reported, and a closed connection unsubscribes")
    func subscriptionEvents() async throws {
        let harness = await ServerHarness()
        let characteristic = try await streaming(harness)
        var events = await harness.server.events().makeAsyncIterator()
        let raw = harness.rawBearer()
        let configuration = try #require(characteristic.clientConfigurationHandle)
        _ = try await raw.request(.writeRequest(.init(handle: configuration, value: [0x01, 0x00])))
        guard case let .subscriptionChanged(subscribed)? = await events.next() else {
            Issue.record("expected a subscription change")
            return
        }
        #expect(subscribed.connectionHandle == raw.handle)
        #expect(subscribed.valueHandle == characteristic.valueHandle)
        #expect(subscribed.characteristicUUID == TestDatabase.streaming)
        #expect(subscribed.isNotifying && !subscribed.isIndicating)

        harness.disconnect(handle: raw.handle)
        guard case let .subscriptionChanged(unsubscribed)? = await events.next() else {
            Issue.record("expected a subscription change")
            return
        }
        #expect(!unsubscribed.isSubscribed)
        #expect(await harness.server.subscriptions(forHandle: characteristic.valueHandle).isEmpty)
        #expect(await harness.server.connectionHandles.isEmpty)
    }

    @Test("When the controller stops taking notifications, updates report a full queue, then that it drained")
    func backpressure() async throws {
        var settings = GATTServerSettings()
        settings.maximumPendingNotifications = 2
        let harness = await ServerHarness(settings: settings)
        let characteristic = try await streaming(harness)
        let raw = harness.rawBearer()
        _ = try await raw.request(.writeRequest(.init(handle: try #require(characteristic.clientConfigurationHandle), value: [0x01, 0x00])))
        var events = await harness.server.events().makeAsyncIterator()
        harness.holdCompletions(true)
        #expect(try await harness.server.updateValue([1], forHandle: characteristic.valueHandle).notified == [raw.handle])
        #expect(try await harness.server.updateValue([2], forHandle: characteristic.valueHandle).notified == [raw.handle])
        let full = try await harness.server.updateValue([3], forHandle: characteristic.valueHandle)
        #expect(full.queueFull == [raw.handle])
        #expect(full.hasSubscribers && !full.reachedAllSubscribers)
        await #expect(throws: GATTServerError.queueFull(connectionHandle: raw.handle)) {
            try await harness.server.notify([4], forHandle: characteristic.valueHandle, connectionHandle: raw.handle)
        }
        harness.holdCompletions(false)
        let next = await events.next()
        #expect(next == .readyToUpdateSubscribers(connectionHandle: raw.handle))
        #expect(try await harness.server.updateValue([5], forHandle: characteristic.valueHandle).notified == [raw.handle])
    }

    @Test("notify and indicate check the property and the subscription")
    func pushPreconditions() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short))
        let streaming = try #require(published.characteristic(TestDatabase.streaming))
        let raw = harness.rawBearer()
        _ = try await raw.request(.readRequest(.init(handle: short.valueHandle)))
        await #expect(throws: GATTServerError.notPermitted("characteristic AA01 does not have the notify property")) {
            try await harness.server.notify([1], forHandle: short.valueHandle, connectionHandle: raw.handle)
        }
        await #expect(throws: GATTServerError.notSubscribed(connectionHandle: raw.handle, valueHandle: streaming.valueHandle)) {
            try await harness.server.indicate([1], forHandle: streaming.valueHandle, connectionHandle: raw.handle)
        }
        await #expect(throws: GATTServerError.notConnected(connectionHandle: 0x0999)) {
            try await harness.server.notify([1], forHandle: streaming.valueHandle, connectionHandle: 0x0999)
        }
        await #expect(throws: GATTServerError.unknownAttribute(0x0F00)) {
            _ = try await harness.server.updateValue([1], forHandle: 0x0F00)
        }
    }
}
