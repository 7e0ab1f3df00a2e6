import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothPeripheral
import BluetoothVirtual
import Synchronization
import Testing

/// A `writeRequests` stream that nobody reads holds a bounded number of requests, refuses the
/// rest at once, and a request the server gave up on does not keep its task waiting.
@Suite("Write request streams", .timeLimit(.minutes(2)))
struct WriteRequestBufferTests {
    static let service = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let command = BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")

    static func publish(on pair: VirtualPair) async throws -> GATTPublishedCharacteristic {
        let published = try await pair.manager.add(PeripheralService(uuid: service, characteristics: [
            PeripheralCharacteristic(uuid: command, properties: [.read, .write], value: [0]),
        ]))
        return try #require(published.characteristic(command))
    }

    static func request(_ characteristic: GATTPublishedCharacteristic, _ value: UInt8) -> GATTWriteRequest {
        GATTWriteRequest(connectionHandle: 0x40, handle: characteristic.valueHandle, uuid: characteristic.uuid, value: [value], kind: .request)
    }

    @Test("Past its limit the stream refuses a write at once with Insufficient Resources, and counts it")
    func fullStreamRefuses() async throws {
        let pair = try await VirtualPair()
        let characteristic = try await Self.publish(on: pair)
        let requests = await pair.manager.writeRequests(for: characteristic, bufferLimit: 2)
        let router = await pair.manager.router
        let answers = AwaitableLog<(UInt8, GATTWriteResponse)>()
        let writers = (1...3).map { value in
            Task { answers.append((UInt8(value), await router.write(Self.request(characteristic, UInt8(value))))) }
        }
        // Two wait in the stream; the third is answered without waiting for anyone.
        let refused = try #require(await answers.wait(forCount: 1)?.first)
        #expect(refused.1 == .error(.insufficientResources))
        #expect(pair.manager.droppedWriteRequests == 1)
        var iterator = requests.makeAsyncIterator()
        var buffered: [UInt8] = []
        for _ in 0..<2 {
            let request = try #require(await iterator.next())
            buffered.append(request.value[0])
            request.respond(.success)
        }
        #expect(Set(buffered + [refused.0]) == [1, 2, 3], "the two kept are the two not refused")
        let all = try #require(await answers.wait(forCount: 3))
        #expect(all.filter { $0.1 == .success }.count == 2)
        for writer in writers { await writer.value }
        await pair.shutdown()
    }

    @Test("A write the server gives up on (its handler task cancelled) ends at once; a late answer does nothing")
    func cancelledWriteEnds() async throws {
        let pair = try await VirtualPair()
        let characteristic = try await Self.publish(on: pair)
        let requests = await pair.manager.writeRequests(for: characteristic)
        let router = await pair.manager.router
        let writer = Task { await router.write(Self.request(characteristic, 9)) }
        var iterator = requests.makeAsyncIterator()
        let request = try #require(await iterator.next())
        writer.cancel()
        // The request is still held here, unanswered: the writer must not wait for it.
        let answer = try await withTimeout("the cancelled write", .seconds(5)) { await writer.value }
        #expect(answer == .error(.unlikelyError))
        request.respond(.success)
        #expect(await pair.manager.value(of: characteristic) == [0], "nothing stored")
        await pair.shutdown()
    }

    @Test("Over the link: a central's write to a full stream gets Insufficient Resources")
    func centralSeesInsufficientResources() async throws {
        let pair = try await VirtualPair()
        let characteristic = try await Self.publish(on: pair)
        var settings = await pair.manager.backend.server.settings
        settings.handlerTimeout = .milliseconds(200)
        await pair.manager.backend.server.configure(settings)
        // Nobody reads it: the first write waits there until the server gives up on it.
        let requests = await pair.manager.writeRequests(for: characteristic, bufferLimit: 1)
        try await pair.manager.startAdvertising(name: "Bluejay Peripheral", serviceUUIDs: [Self.service])
        _ = try await pair.findPeripheral()
        let connection = try await pair.connect()
        let database = try await connection.gatt.discoverDatabase()
        let service = try #require(database.first { $0.service.uuid == Self.service })
        let target = try #require(service.characteristics.first { $0.characteristic.uuid == Self.command }).characteristic
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: target.valueHandle, code: .unlikelyError))) {
            try await connection.gatt.write([1], to: target)
        }
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: target.valueHandle, code: .insufficientResources))) {
            try await connection.gatt.write([2], to: target)
        }
        #expect(pair.manager.droppedWriteRequests == 1)
        _ = requests
        await pair.shutdown()
    }
}
