import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual
import Synchronization
import Testing

@Suite("PeripheralManager", .timeLimit(.minutes(2)))
struct PeripheralManagerTests {
    @Test("A service built from a profile carries the profile's UUIDs, properties, permissions and initial values")
    func serviceFromProfile() {
        let service = PeripheralService(profile: TISensorTag.AccelerometerService.profile)
        #expect(service.uuid == TISensorTag.AccelerometerService.uuid)
        #expect(service.name == "TI Accelerometer")
        #expect(service.characteristics.map(\.uuid) == [TISensorTag.AccelerometerService.Data.uuid,
                                                        TISensorTag.AccelerometerService.Enabled.uuid,
                                                        TISensorTag.AccelerometerService.UpdatePeriod.uuid])
        let enabled = service.characteristics[1]
        #expect(enabled.properties == [.read, .write])
        #expect(enabled.permissions == [.readable, .writeable])
        #expect(enabled.value == [0])
        #expect(service.characteristics[0].properties == [.read, .notify])
        #expect(service.characteristics[0].permissions == .readable)
    }

    @Test("Text updates go through the characteristic's profile; values without subscribers are stored")
    func stringUpdates() async throws {
        let pair = try await VirtualPair()
        let battery = try await pair.manager.add(PeripheralService(profile: BatteryProfile.service))
        let level = try #require(battery.characteristic(BatteryProfile.Level.uuid))
        let result = try await pair.manager.updateValue(stringValue: ["Battery Level": "42"], for: level)
        #expect(result.shortfall == .noSubscribers)
        #expect(!result.succeeded)
        #expect(await pair.manager.value(of: level) == [42])
        await #expect(throws: PeripheralError.invalidStringValue(level.uuid, ["Battery Level": "142"])) {
            try await pair.manager.updateValue(stringValue: ["Battery Level": "142"], for: level)
        }
        let typed = try await pair.manager.updateValue(try #require(BatteryProfile.Level(rawValue: 7)), for: level)
        #expect(typed.shortfall == .noSubscribers)
        #expect(await pair.manager.value(of: level) == [7])

        let plain = try await pair.manager.add(PeripheralService(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
            PeripheralCharacteristic(uuid: BluetoothUUID(UInt16(0xFFF1)), properties: [.read, .notify]),
            PeripheralCharacteristic(uuid: BluetoothUUID(UInt16(0xFFF2)), properties: .read),
        ]))
        let untyped = try #require(plain.characteristic(BluetoothUUID(UInt16(0xFFF1))))
        await #expect(throws: PeripheralError.noProfile(untyped.uuid)) {
            try await pair.manager.updateValue(stringValue: ["x": "1"], for: untyped)
        }
        let readOnly = try #require(plain.characteristic(BluetoothUUID(UInt16(0xFFF2))))
        await #expect(throws: PeripheralError.self) { try await pair.manager.updateValue([1], for: readOnly) }
        try await pair.manager.setValue([9, 9], for: readOnly)
        #expect(await pair.manager.value(of: readOnly) == [9, 9])
        #expect(await pair.manager.characteristic(BluetoothUUID(UInt16(0xFFF2)))?.valueHandle == readOnly.valueHandle)
        await pair.shutdown()
    }

    @Test("Reads are answered by a read handler when one is set, else from the value")
    func readHandler() async throws {
        let pair = try await VirtualPair()
        let service = try await pair.manager.add(PeripheralService(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
            PeripheralCharacteristic(uuid: BluetoothUUID(UInt16(0xFFF1)), properties: .read, value: [1]),
        ]))
        let characteristic = try #require(service.characteristics.first)
        try await pair.manager.startAdvertising(name: "Reader")
        let connection = try await pair.connect()
        #expect(try await connection.gatt.readValue(handle: characteristic.valueHandle) == [1])
        let offsets = Mutex<[Int]>([])
        await pair.manager.setReadHandler(for: characteristic) { request in
            offsets.withLock { $0.append(request.offset) }
            return .value((0..<600).map { UInt8($0 % 200) })
        }
        // Longer than 512: the server keeps the first 512, a long read gets all of them.
        #expect(try await connection.gatt.readLongValue(handle: characteristic.valueHandle) == (0..<512).map { UInt8($0 % 200) })
        #expect(offsets.withLock { $0 } == [0])
        await pair.manager.setReadHandler(for: characteristic) { _ in .error(.insufficientAuthorization) }
        await #expect(throws: HostError.att(ATTError(requestOpcode: .readRequest, handle: characteristic.valueHandle, code: .insufficientAuthorization))) {
            try await connection.gatt.readValue(handle: characteristic.valueHandle)
        }
        await pair.manager.setReadHandler(for: characteristic, nil)
        #expect(try await connection.gatt.readValue(handle: characteristic.valueHandle) == [1])
        try await connection.disconnect()
        await pair.shutdown()
    }

    @Test("Callback forms report results; a write request dropped unanswered is Unlikely Error")
    func callbacks() async throws {
        let pair = try await VirtualPair()
        let added = await withCheckedContinuation { continuation in
            pair.manager.add(PeripheralService(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
                PeripheralCharacteristic(uuid: BluetoothUUID(UInt16(0xFFF1)), properties: [.read, .write], value: [1]),
            ])) { continuation.resume(returning: $0) }
        }
        let service = try added.get()
        let characteristic = try #require(service.characteristics.first)
        let seen = Mutex<[String]>([])
        pair.manager.onWriteRequest(for: characteristic) { request in
            seen.withLock { $0.append("\(request.value)") }
            // Dropped without an answer.
        }
        let observation = await pair.manager.onConnectionEvent { event in
            if case .connected = event { seen.withLock { $0.append("connected") } }
        }
        defer { observation.cancel() }
        let advertised = await withCheckedContinuation { continuation in
            pair.manager.startAdvertising(name: "Callbacks") { continuation.resume(returning: $0) }
        }
        try advertised.get()
        let connection = try await pair.connect()
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: characteristic.valueHandle, code: .unlikelyError))) {
            try await connection.gatt.write([5], to: GATTCharacteristic(uuid: characteristic.uuid, properties: characteristic.properties,
                                                                       declarationHandle: characteristic.declarationHandle,
                                                                       valueHandle: characteristic.valueHandle,
                                                                       endHandle: characteristic.valueHandle))
        }
        #expect(try await connection.gatt.readValue(handle: characteristic.valueHandle) == [1])
        #expect(await eventually(timeout: .seconds(10)) { seen.withLock { $0.contains("connected") } })
        #expect(seen.withLock { $0 } .contains("[5]"))
        #expect(seen.withLock { $0 } .contains("connected"))
        let update = await withCheckedContinuation { continuation in
            pair.manager.updateValue([1], for: characteristic) { continuation.resume(returning: $0) }
        }
        #expect(throws: PeripheralError.self) { try update.get() }
        try await connection.disconnect()
        await pair.shutdown()
    }

    @Test("Advertising data: the name goes where it fits, and too much is refused clearly")
    func advertisingLayout() async throws {
        let pair = try await VirtualPair()
        try await pair.manager.startAdvertising(name: "Short", serviceUUIDs: [BluetoothUUID(UInt16(0x180F))])
        let short = try await pair.findPeripheral()
        #expect(short.advertisingData.localName == "Short")
        #expect(short.advertisingData.flags == .leOnlyGeneralDiscoverable)
        #expect(short.advertisingData.serviceUUIDs == [BluetoothUUID(UInt16(0x180F))])

        let longName = String(repeating: "N", count: 40)
        try await pair.manager.startAdvertising(name: longName)
        let long = try await pair.findPeripheral(requireScanResponse: true)
        #expect(long.scanResponse?.shortenedLocalName == String(repeating: "N", count: 29))

        let uuids = [BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"), BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")]
        await #expect(throws: PeripheralError.advertising("the service UUIDs and fields need 37 octets but only 31 fit; advertise fewer UUIDs or move fields out")) {
            try await pair.manager.startAdvertising(name: "x", serviceUUIDs: uuids)
        }
        await #expect(throws: PeripheralError.self) {
            try await pair.manager.startAdvertising(AdvertisingData([.completeLocalName(String(repeating: "z", count: 30))]))
        }
        await pair.shutdown()
    }
}
