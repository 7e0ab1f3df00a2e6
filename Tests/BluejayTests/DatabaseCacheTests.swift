@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Testing

/// Bluejay and the GATT cache: a reconnection to a trusted (or bonded) peripheral whose
/// Database Hash is unchanged discovers nothing; a changed database or a cleared cache is
/// discovered again.
///
/// Bluejay bounds the cache check of a new link by the operation timeout and, past it, goes on
/// without the cache (robust caching not enabled either): right, but not what these tests are
/// about. When every unit test started at once (a `swift test` without the width cap that
/// `make test` sets) beside another test run, the check took longer than the default 15 s and
/// both tests failed; here it has no bound but the suite's time limit.
@Suite("Bluejay GATT caching on the virtual link", .timeLimit(.minutes(2)))
struct DatabaseCacheTests {
    private func startUnbounded(on link: VirtualLink) async throws -> Bluejay {
        try await startBluejay(on: link) { $0.operationTimeout = .none }
    }

    /// Discovery requests sent on the current link.
    private func discoveryRequests(_ bluejay: Bluejay) -> Int? {
        bluejay.state.withLock { $0.link.link?.hostConnection?.gatt.discoveryRequestCount }
    }

    private func reconnectAndRead(_ bluejay: Bluejay, _ peripheral: VirtualPeripheral) async throws -> Int? {
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let location: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(location == .success(1))
        let description: ReadResult<String> = try await callback { done in bluejay.read(from: HeartRate.userDescription) { done($0) } }
        #expect(description == .success("Body Sensor Location"))
        let count = discoveryRequests(bluejay)
        let disconnected: DisconnectionResult = try await callback { done in bluejay.disconnect { done($0) } }
        #expect(disconnected == .disconnected(peripheral.identifier))
        return count
    }

    @Test("A trusted peripheral's unchanged database is not discovered again; a changed one or a cleared cache is")
    func cachedReconnection() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:21")
        let bluejay = try await startUnbounded(on: link)
        try bluejay.setDatabaseTrusted(true, for: peripheral.identifier)

        #expect(try await reconnectAndRead(bluejay, peripheral) ?? 0 > 0, "the first connection discovers")
        #expect(try await reconnectAndRead(bluejay, peripheral) == 0, "the cached database answers")

        _ = try await peripheral.host.server.addService(GATTServiceDefinition(uuid: "FEE0", characteristics: [
            GATTCharacteristicDefinition(uuid: "FEE1", properties: .read, value: [1]),
        ]))
        #expect(try await reconnectAndRead(bluejay, peripheral) ?? 0 > 0, "the Database Hash changed")
        #expect(try await reconnectAndRead(bluejay, peripheral) == 0)

        try await bluejay.removeCachedDatabase(of: peripheral.identifier)
        #expect(try await reconnectAndRead(bluejay, peripheral) ?? 0 > 0, "the cache was cleared")

        try bluejay.setDatabaseTrusted(false, for: peripheral.identifier)
        #expect(try await reconnectAndRead(bluejay, peripheral) ?? 0 > 0, "no longer trusted: discovered as usual")
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("A read or a write refused with Database Out Of Sync finds its characteristic again and succeeds",
          arguments: [false, true])
    func outOfSyncIsRetried(writing: Bool) async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:22")
        let bluejay = try await startUnbounded(on: link)
        try bluejay.setDatabaseTrusted(true, for: peripheral.identifier)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let first: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
        #expect(first == .success(1))
        let connection = try #require(bluejay.state.withLock { $0.link.link?.hostConnection })
        // Service Changed off, so that the change reaches the client only as Database Out Of Sync.
        try await connection.gatt.writeValue([0x00, 0x00], handle: 0x0009)
        let server = await peripheral.host.server
        let heartRate = try #require(await server.services.first { $0.uuid == BluetoothUUID(UInt16(0x180D)) })
        try await server.removeService(heartRate)
        let moved = try await server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A38)), properties: [.read, .write], value: [0x05]),
        ]))
        #expect(moved.handleRange != heartRate.handleRange)
        let incoming = try #require(await server.connectionHandles.first)
        #expect(await server.isChangeAware(connectionHandle: incoming) == false)

        if writing {
            // The characteristic is known, so the write begins without a task; the refusal
            // resynchronises in one.
            let written: WriteResult = try await callback { done in bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(7)) { done($0) } }
            #expect((try? written.get()) != nil)
            let newHandle = try #require(moved.characteristics.first?.valueHandle)
            #expect(await server.value(forHandle: newHandle) == [7], "written at the characteristic's new handle after the refusal")
        } else {
            let second: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
            #expect(second == .success(5), "read at the characteristic's new handle after the refusal")
        }
        #expect(await server.isChangeAware(connectionHandle: incoming) == true)
        await bluejay.stop()
        await peripheral.shutdown()
    }
}
