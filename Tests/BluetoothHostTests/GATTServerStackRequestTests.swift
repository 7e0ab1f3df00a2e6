import BluetoothCore
@testable import BluetoothHost
import Synchronization
import Testing

/// Requests another stack's ATT server (BlueZ) took for our database: the handlers and stored
/// values answer, the application's authorization and length checks apply, the link's own
/// security is that stack's to check.
@Suite("GATT server: requests from another stack", .timeLimit(.minutes(1)))
struct GATTServerStackRequestTests {
    static let service = BluetoothUUID(UInt16(0xFFE0))
    static let stored = BluetoothUUID(UInt16(0xFFE1))
    static let guarded = BluetoothUUID(UInt16(0xFFE2))
    static let handled = BluetoothUUID(UInt16(0xFFE3))
    static let client = GATTServer.StackClient(connectionHandle: 3, peer: DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_03), type: .random))

    final class WriteLog: Sendable {
        let requests = Mutex<[GATTWriteRequest]>([])
    }

    private func server(writes: WriteLog = WriteLog()) async throws -> (GATTServer, GATTPublishedService) {
        let server = GATTServer(send: { _, _, _ in })
        let published = try await server.addService(GATTServiceDefinition(uuid: Self.service, characteristics: [
            GATTCharacteristicDefinition(uuid: Self.stored, properties: [.read, .write], value: Array("0123456789".utf8), maximumValueLength: 12),
            GATTCharacteristicDefinition(uuid: Self.guarded, properties: [.read, .write],
                                         permissions: [.readable, .writeable, .readEncryptionRequired, .writeAuthorizationRequired],
                                         value: [7]),
            GATTCharacteristicDefinition(uuid: Self.handled, properties: [.write, .writeWithoutResponse], onWrite: { request in
                writes.requests.withLock { $0.append(request) }
                return request.value == [0xFF] ? .error(.valueNotAllowed) : .success
            }),
        ]))
        return (server, published)
    }

    @Test("A read from an offset gets the rest of the value; past its end, Invalid Offset; an unknown handle, Invalid Handle")
    func reads() async throws {
        let (server, published) = try await server()
        let stored = try #require(published.characteristic(Self.stored))
        #expect(await server.read(handle: stored.valueHandle, offset: 0, from: Self.client) == .value(Array("0123456789".utf8)))
        #expect(await server.read(handle: stored.valueHandle, offset: 6, from: Self.client) == .value(Array("6789".utf8)))
        #expect(await server.read(handle: stored.valueHandle, offset: 11, from: Self.client) == .error(.invalidOffset))
        #expect(await server.read(handle: 0x0F00, offset: 0, from: Self.client) == .error(.invalidHandle))
    }

    @Test("The link's encryption is the other stack's check; the application's authorization is still asked, and refuses")
    func security() async throws {
        let (server, published) = try await server()
        let guarded = try #require(published.characteristic(Self.guarded))
        #expect(await server.read(handle: guarded.valueHandle, offset: 0, from: Self.client) == .value([7]))
        // No authorization handler: refused, and the value is kept.
        #expect(await server.write([9], handle: guarded.valueHandle, kind: .request, from: Self.client) == .insufficientAuthorization)
        #expect(await server.value(forHandle: guarded.valueHandle) == [7])
        let asked = Mutex<[GATTAuthorizationRequest]>([])
        await server.setAuthorizationHandler { request in
            asked.withLock { $0.append(request) }
            return true
        }
        #expect(await server.write([9], handle: guarded.valueHandle, kind: .request, from: Self.client) == nil)
        #expect(await server.value(forHandle: guarded.valueHandle) == [9])
        #expect(asked.withLock { $0.map(\.connectionHandle) } == [3])
        #expect(asked.withLock { $0.first?.peer } == Self.client.peer)
    }

    @Test("A write goes through the handler, which may refuse it; too long a value is refused before it")
    func writes() async throws {
        let writes = WriteLog()
        let (server, published) = try await server(writes: writes)
        let handled = try #require(published.characteristic(Self.handled))
        let stored = try #require(published.characteristic(Self.stored))
        #expect(await server.write([1], handle: handled.valueHandle, kind: .command, from: Self.client) == nil)
        #expect(await server.write([0xFF], handle: handled.valueHandle, kind: .request, from: Self.client) == .valueNotAllowed)
        #expect(writes.requests.withLock { $0.map(\.value) } == [[1], [0xFF]])
        #expect(writes.requests.withLock { $0.map(\.kind) } == [.command, .request])
        #expect(await server.value(forHandle: handled.valueHandle) == [1], "the refused value was not stored")
        #expect(await server.write(Array(repeating: 1, count: 13), handle: stored.valueHandle, kind: .request, from: Self.client)
            == .invalidAttributeValueLength)
        // The characteristic's properties still decide which kinds of write it takes.
        #expect(await server.write([1], handle: stored.valueHandle, kind: .command, from: Self.client) == .writeNotPermitted)
    }
}
