import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual
import Synchronization
import Testing

/// Our own central talks to our own peripheral: two LEHosts on two virtual controllers of one
/// in-process link, with the GATT server behind a PeripheralManager.
@Suite("Our central and our peripheral over the virtual link", .timeLimit(.minutes(2)))
struct OverVirtualLinkTests {
    static let service = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let counter = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
    static let command = BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
    static let blob = BluetoothUUID("6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
    static let blobValue: [UInt8] = (0..<400).map { UInt8($0 % 256) }

    static var definition: PeripheralService {
        PeripheralService(uuid: service, characteristics: [
            PeripheralCharacteristic(uuid: counter, properties: [.read, .notify, .indicate], value: [0, 0, 0, 0], userDescription: "Counter"),
            PeripheralCharacteristic(uuid: command, properties: [.read, .write, .writeWithoutResponse], value: [0]),
            PeripheralCharacteristic(uuid: blob, properties: [.read, .write], value: blobValue),
        ])
    }

    @Test("Advertise, connect, discover, read, write through the request stream, long values, notify, indicate")
    func fullExchange() async throws {
        let pair = try await VirtualPair()
        let published = try await pair.manager.add(Self.definition)
        _ = try await pair.manager.add(PeripheralService(profile: BatteryProfile.service))
        let commandCharacteristic = try #require(published.characteristic(Self.command))
        let counterCharacteristic = try #require(published.characteristic(Self.counter))
        let requests = await pair.manager.writeRequests(for: commandCharacteristic)
        let answered = Mutex<[[UInt8]]>([])
        let responder = Task {
            for await request in requests {
                answered.withLock { $0.append(request.value) }
                // One octet only; anything else gets an application error.
                request.respond(request.value.count == 1 ? .success : .error(ATTErrorCode(rawValue: 0x80)))
            }
        }
        defer { responder.cancel() }
        var connections = await pair.manager.connectionEvents().makeAsyncIterator()
        let readiness = ReadinessCounter(await pair.manager.connectionEvents())
        var subscriptions = await pair.manager.subscriptionChanges().makeAsyncIterator()

        try await pair.manager.startAdvertising(name: "Bluejay Peripheral", serviceUUIDs: [Self.service])
        // The 128-bit UUID leaves no room for the name: it is in the scan response.
        let advertisement = try await pair.findPeripheral(requireScanResponse: true)
        #expect(advertisement.isConnectable)
        #expect(advertisement.advertisingData.serviceUUIDs == [Self.service])
        #expect(advertisement.advertisingData.localName == nil)
        #expect(advertisement.scanResponse?.localName == "Bluejay Peripheral")

        let connection = try await pair.connect()
        let connected = await connections.next()
        guard case let .connected(central)? = connected else {
            Issue.record("expected a connection event, got \(String(describing: connected))")
            return
        }
        #expect(central.address?.address == VirtualPair.centralAddress)
        #expect(await pair.manager.isAdvertising == false)

        let gatt = connection.gatt
        let database = try await gatt.discoverDatabase()
        #expect(database.map(\.service.uuid) == [GATTAttributeType.gapService, GATTAttributeType.gattService, Self.service,
                                                BluetoothUUID(UInt16(0x180F))])
        let name = try await gatt.readValues(ofType: GATTAttributeType.deviceName)
        #expect(name.map(\.value) == [Array("Bluejay Peripheral".utf8)])

        let custom = try #require(database.first { $0.service.uuid == Self.service })
        let counter = try #require(custom.characteristics.first { $0.characteristic.uuid == Self.counter })
        let command = try #require(custom.characteristics.first { $0.characteristic.uuid == Self.command })
        let blob = try #require(custom.characteristics.first { $0.characteristic.uuid == Self.blob })
        #expect(counter.descriptors.map(\.uuid) == [GATTAttributeType.clientCharacteristicConfiguration, GATTAttributeType.characteristicUserDescription])

        // Reads, short and long (the MTU was exchanged on connecting: 517 here).
        #expect(try await gatt.read(counter.characteristic) == [0, 0, 0, 0])
        #expect(try await gatt.read(blob.characteristic) == Self.blobValue)

        // Writes answered by the application.
        try await gatt.write([7], to: command.characteristic)
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: command.characteristic.valueHandle,
                                                     code: ATTErrorCode(rawValue: 0x80)))) {
            try await gatt.write([1, 2], to: command.characteristic)
        }
        #expect(try await gatt.read(command.characteristic) == [7])
        #expect(answered.withLock { $0 } == [[7], [1, 2]])

        // A long write (prepared writes) that the stored value takes whole.
        let longValue = (0..<512).map { UInt8(255 - $0 % 256) }
        try await gatt.writeLongValue(longValue, handle: blob.characteristic.valueHandle)
        #expect(try await gatt.read(blob.characteristic) == longValue)

        // Notifications in order.
        var notifications = try await gatt.subscribe(to: counter.characteristic).makeAsyncIterator()
        let subscribed = await subscriptions.next()
        #expect(subscribed?.isNotifying == true)
        #expect(subscribed?.characteristic.valueHandle == counterCharacteristic.valueHandle)
        // A burst larger than the controller's buffers: full queues are reported and waited out.
        for index in 1...50 {
            try await pair.manager.deliver(UInt32(index).serialize(), to: counterCharacteristic, readiness: readiness)
        }
        for index in 1...50 {
            let value = try await notifications.next()
            #expect(value == UInt32(index).serialize())
        }
        try await gatt.unsubscribe(from: counter.characteristic)
        _ = await subscriptions.next()
        let unsubscribed = try await pair.manager.updateValue(UInt32(99), for: counterCharacteristic)
        #expect(unsubscribed.shortfall == .noSubscribers)

        // Indications in order, each confirmed.
        var indications = try await gatt.subscribe(to: counter.characteristic, preferIndications: true).makeAsyncIterator()
        for index in 100..<110 {
            try await pair.manager.deliver(UInt32(index).serialize(), to: counterCharacteristic, readiness: readiness)
        }
        for index in 100..<110 {
            let value = try await indications.next()
            #expect(value == UInt32(index).serialize())
        }

        try await connection.disconnect()
        var disconnected = await connections.next()
        while case .readyToUpdateSubscribers? = disconnected { disconnected = await connections.next() }
        guard case .disconnected? = disconnected else {
            Issue.record("expected a disconnection event, got \(String(describing: disconnected))")
            return
        }
        await pair.shutdown()
    }

    @Test("A service added while connected reaches the central through Service Changed")
    func serviceChanged() async throws {
        let pair = try await VirtualPair()
        _ = try await pair.manager.add(Self.definition)
        try await pair.manager.startAdvertising(name: "Changer")
        let connection = try await pair.connect()
        let gatt = connection.gatt
        #expect(try await gatt.enableServiceChangedIndications())
        var changes = gatt.serviceChanges().makeAsyncIterator()
        let battery = try await pair.manager.add(PeripheralService(profile: BatteryProfile.service))
        let change = await changes.next()
        #expect(change?.affectedHandles == battery.handleRange)
        #expect(try await gatt.discoverPrimaryServices(uuid: BatteryProfile.Service.uuid).map(\.handleRange) == [battery.handleRange])
        try await pair.manager.remove(battery)
        let removal = await changes.next()
        #expect(removal?.affectedHandles == battery.handleRange)
        try await connection.disconnect()
        await pair.shutdown()
    }

    /// A characteristic whose reads need encryption protects its pushed values too (Core 6.0,
    /// Vol 3, Part C, 10.3.1): the app learns from `updateValue` who was left out and why.
    @Test("updateValue tells which centrals' links do not allow a protected value, and why")
    func protectedValueWithheld() async throws {
        let pair = try await VirtualPair()
        let published = try await pair.manager.add(PeripheralService(uuid: Self.service, characteristics: [
            PeripheralCharacteristic(uuid: Self.counter, properties: [.read, .notify], readSecurity: .encryption, value: [0]),
        ]))
        let characteristic = try #require(published.characteristic(Self.counter))
        var connections = await pair.manager.connectionEvents().makeAsyncIterator()
        try await pair.manager.startAdvertising(name: "Protected")
        let connection = try await pair.connect()
        guard case let .connected(central)? = await connections.next() else {
            Issue.record("expected a connection event")
            return
        }
        let counter = try await connection.gatt.characteristic(Self.counter, inService: Self.service)
        // Never paired: the subscription is refused, so nobody subscribes.
        await #expect { _ = try await connection.gatt.subscribe(to: counter) } throws: { error in
            if case let HostError.att(att) = error { att.code == .insufficientAuthentication } else { false }
        }
        #expect(try await pair.manager.updateValue([1], for: characteristic).shortfall == .noSubscribers)

        _ = try await pair.central.pair(connection)
        #expect(await eventually { await pair.manager.bonds().count == 1 }, "the peripheral stored the bond")
        var values = try await connection.gatt.subscribe(to: counter).makeAsyncIterator()
        let delivered = try await pair.manager.updateValue([2], for: characteristic)
        #expect(delivered.delivered == [central] && delivered.withheld.isEmpty && delivered.succeeded)
        #expect(try await values.next() == [2])

        let identity = try #require(await pair.manager.bonds().first).peerIdentity
        #expect(try await pair.manager.removeBond(with: identity))
        let withheld = try await pair.manager.updateValue([3], for: characteristic)
        #expect(withheld.withheld == [ValueUpdateResult.Withheld(central: central, reason: .bondRemoved)])
        #expect(withheld.delivered.isEmpty && withheld.shortfall == nil && !withheld.succeeded)
        #expect(try await pair.manager.security(of: central).isBondRemoved)
        try await connection.disconnect()
        await pair.shutdown()
    }

    @Test("Advertising restarts after the central disconnects when asked")
    func restartAfterDisconnection() async throws {
        let pair = try await VirtualPair()
        var options = PeripheralAdvertisingOptions()
        options.parameters.restartsAfterDisconnection = true
        try await pair.manager.startAdvertising(name: "Again", options: options)
        let first = try await pair.connect()
        #expect(await pair.manager.isAdvertising == false)
        try await first.disconnect()
        // The peripheral's host sees the disconnection and advertises again.
        #expect(await eventually(timeout: .seconds(10)) { await pair.manager.isAdvertising }, "advertising again")
        let second = try await pair.connect()
        #expect(second.isConnected)
        try await second.disconnect()
        await pair.shutdown()
    }

    @Test("The central decodes our iBeacon and our non-connectable advertising")
    func beacon() async throws {
        let pair = try await VirtualPair()
        let region = BeaconRegion(proximityUUID: BluetoothUUID("DE6E8DAD-8D99-4E20-8C4B-D9CC2F9A7E83"), identifier: "My iBeacon",
                                  major: 100, minor: 1, measuredPower: -59)
        try await pair.manager.startAdvertising(region: region)
        let advertisement = try await pair.findPeripheral()
        #expect(!advertisement.isConnectable)
        #expect(IBeacon(advertisingData: advertisement.advertisingData) == region.beacon)
        try await pair.manager.stopAdvertising()
        #expect(await pair.manager.isAdvertising == false)
        await pair.shutdown()
    }
}
