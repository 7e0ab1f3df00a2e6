import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual
import Synchronization
import Testing

/// A bonded central's subscriptions as our peripheral's app sees them (Core 6.0, Vol 3, Part G,
/// 3.3.3.3): restored on its next link once encrypted, announced as restored subscription
/// changes; what it missed while away, where the characteristic asks for it.
@Suite("PeripheralManager: bonded centrals' subscriptions", .timeLimit(.minutes(2)))
struct PeripheralBondedSubscriptionTests {
    static let service = BluetoothUUID("6E400B01-B5A3-F393-E0A9-E50E24DCCA9E")
    static let level = BluetoothUUID("6E400B02-B5A3-F393-E0A9-E50E24DCCA9E")

    @Test("A bonded central comes back subscribed: a restored SubscriptionChange, a subscriber again, the latest value it missed")
    func restoredSubscription() async throws {
        let pair = try await VirtualPair()
        var characteristic = PeripheralCharacteristic(uuid: Self.level, properties: [.read, .notify], readSecurity: .encryption, value: [0])
        characteristic.notifiesLatestValueOnReconnection = true
        let published = try await pair.manager.add(PeripheralService(uuid: Self.service, characteristics: [characteristic]))
        let level = try #require(published.characteristic(Self.level))
        var changes = await pair.manager.subscriptionChanges().makeAsyncIterator()
        var connections = await pair.manager.connectionEvents().makeAsyncIterator()
        try await pair.manager.startAdvertising(name: "Bonded")
        let first = try await pair.connect()
        _ = try await pair.central.pair(first)
        #expect(await eventually { await pair.manager.bonds().count == 1 }, "the peripheral stored the bond")
        let identity = try #require(await pair.manager.bonds().first).peerIdentity
        _ = try await first.gatt.subscribe(to: try await first.gatt.characteristic(Self.level, inService: Self.service))
        let written = try #require(await changes.next())
        #expect(written.isSubscribed && !written.isRestored)
        try await first.disconnect()
        let left = try #require(await changes.next())
        #expect(!left.isSubscribed)

        // Away: the app learns the central will get the value when it comes back.
        let away = try await pair.manager.updateValue([0x42], for: level)
        #expect(away.shortfall == .noSubscribers && away.deferred == [identity])

        try await pair.manager.startAdvertising(name: "Bonded")
        let second = try await pair.connect()
        var central: Central?
        while let event = await connections.next() {
            if case let .connected(connected) = event, connected.connectionHandle == second.handle {
                central = connected
                break
            }
        }
        let link = try #require(central)
        let received = Mutex<[[UInt8]]>([])
        let stream = second.gatt.notifications()
        let collector = Task { for await notification in stream { received.withLock { $0.append(notification.value) } } }
        defer { collector.cancel() }
        _ = try await pair.central.secure(second, allowPairing: false)
        let restored = try #require(await changes.next())
        #expect(restored.isRestored && restored.isNotifying && restored.central == link && restored.bondIdentity == identity)
        #expect(await pair.manager.subscribers(of: level) == [link])
        #expect(await eventually { received.withLock { $0 } == [[0x42]] }, "the latest value it missed, once")
        let update = try await pair.manager.updateValue([0x43], for: level)
        #expect(update.delivered == [link] && update.succeeded && update.deferred.isEmpty)
        #expect(await eventually { received.withLock { $0 } == [[0x42], [0x43]] })
        try await second.disconnect()
        await pair.shutdown()
    }
}
