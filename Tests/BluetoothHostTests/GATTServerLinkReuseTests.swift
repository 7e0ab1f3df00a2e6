import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Logging
import Synchronization
import TestSupport
import Testing

/// A controller gives the next link the handle of the one that just ended, and the reader thread
/// routes the new link's first ATT PDU before the host actor tells the GATT server the old link
/// ended. The new peer must never get what the old one had: its subscriptions (and so the values
/// it subscribed to, checked against the old link's security), its bond's state or its queue.
@Suite("GATT server: a link on a reused handle", .timeLimit(.minutes(1)))
struct GATTServerLinkReuseTests {
    static let handle: UInt16 = 0x0040
    static let characteristic = BluetoothUUID(UInt16(0xAD01))

    /// What the server sent on one link's bearer, as the router would frame it.
    final class Wire: Sendable {
        private let pdus = Mutex<[[UInt8]]>([])
        var sent: [[UInt8]] { pdus.withLock { $0 } }

        func bearer(peer: UInt64) -> ATTBearer {
            ATTBearer(connectionHandle: GATTServerLinkReuseTests.handle, peer: DeviceAddress(BluetoothAddress(rawValue: peer), type: .random),
                      logger: Logger(label: "test"), send: { [self] pdu, completion in
                          pdus.withLock { $0.append(pdu) }
                          completion?(.success(()))
                      })
        }

        func count(of opcode: ATTOpcode) -> Int { sent.filter { $0.first == opcode.rawValue }.count }

        func waitFor(_ opcode: ATTOpcode, count: Int = 1) async throws {
            let arrived = await eventually { self.count(of: opcode) >= count }
            try #require(arrived, "no \(opcode) from the server")
        }
    }

    @Test func theNextLinksPeerNeverGetsTheEndedLinksSubscription() async throws {
        let server = GATTServer(preferredMTU: 517, clock: .continuous) { _, _, _ in }
        let published = try await server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0xAD00)), characteristics: [
            GATTCharacteristicDefinition(uuid: Self.characteristic, properties: [.read, .notify], value: [0x01]),
        ]))
        let value = try #require(published.characteristic(Self.characteristic))
        let cccd = try #require(value.clientConfigurationHandle)
        let subscribe: [UInt8] = [ATTOpcode.writeRequest.rawValue, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00]
        let read: [UInt8] = [ATTOpcode.readRequest.rawValue, UInt8(value.valueHandle & 0xFF), UInt8(value.valueHandle >> 8)]

        // The first peer subscribes, then its link ends on the reader thread (the bearer closes);
        // the host actor has not told the server yet.
        let (first, second) = (Wire(), Wire())
        let firstBearer = first.bearer(peer: 0xC0FF_EE00_0001)
        server.receive(subscribe, from: firstBearer)
        try await first.waitFor(.writeResponse)
        firstBearer.close(with: .disconnected(reason: .remoteUserTerminatedConnection))

        // The next peer on the same handle talks first: it is a new client.
        let secondBearer = second.bearer(peer: 0xC0FF_EE00_0002)
        server.receive(read, from: secondBearer)
        try await second.waitFor(.readResponse)
        let update = try await server.updateValue([0x02], forHandle: value.valueHandle)
        #expect(update.notified.isEmpty, "the second peer never subscribed")
        #expect(second.count(of: .handleValueNotification) == 0)
        #expect(first.count(of: .handleValueNotification) == 0, "nothing goes out on an ended link's bearer")

        // It subscribes; the first link's end reaches the server late and leaves it alone.
        server.receive(subscribe, from: secondBearer)
        try await second.waitFor(.writeResponse)
        server.connectionDidClose(firstBearer)
        let later = try await server.updateValue([0x03], forHandle: value.valueHandle)
        #expect(later.notified == [Self.handle])
        try await second.waitFor(.handleValueNotification)
        #expect(second.sent.last == [ATTOpcode.handleValueNotification.rawValue, UInt8(value.valueHandle & 0xFF), UInt8(value.valueHandle >> 8), 0x03])
    }

    /// Each link's queue is its bearer's: what an ended link still had waiting, while a handler
    /// held it up, neither counts against the next link on the handle nor is served.
    @Test func theNextLinksPDUsAreNotCountedAgainstTheEndedLinksQueue() async throws {
        let server = GATTServer(preferredMTU: 517, clock: .continuous) { _, _, _ in }
        var settings = GATTServerSettings()
        settings.maximumQueuedPDUs = 2
        await server.configure(settings)
        let handlerCalled = TestGate()
        let writes = AwaitableLog<[UInt8]>()
        let published = try await server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0xAD00)), characteristics: [
            GATTCharacteristicDefinition(uuid: Self.characteristic, properties: .read, onRead: { _ in
                try? await handlerCalled.wait()
                return .value([1])
            }),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xAD02)), properties: .writeWithoutResponse, value: [0], onWrite: { request in
                writes.append(request.value)
                return .success
            }),
        ]))
        let slow = try #require(published.characteristic(Self.characteristic)).valueHandle
        let sink = try #require(published.characteristic(BluetoothUUID(UInt16(0xAD02)))).valueHandle
        func write(_ value: UInt8) -> [UInt8] { [ATTOpcode.writeCommand.rawValue, UInt8(sink & 0xFF), UInt8(sink >> 8), value] }

        // The first link's read waits for its handler; two commands fill its queue, a third is dropped.
        let (first, second) = (Wire(), Wire())
        let firstBearer = first.bearer(peer: 0xC0FF_EE00_0001)
        server.receive([ATTOpcode.readRequest.rawValue, UInt8(slow & 0xFF), UInt8(slow >> 8)], from: firstBearer)
        try await handlerCalled.waitForArrivals(1)
        for value in UInt8(1)...3 { server.receive(write(value), from: firstBearer) }
        #expect(server.droppedPDUCount == 1)
        #expect(firstBearer.serverQueue.pendingCount == 2)

        // Its link ends on the reader thread; the next link on the handle is not limited by it.
        firstBearer.close(with: .disconnected(reason: .remoteUserTerminatedConnection))
        let secondBearer = second.bearer(peer: 0xC0FF_EE00_0002)
        for value in UInt8(0xE1)...0xE2 { server.receive(write(value), from: secondBearer) }
        #expect(server.droppedPDUCount == 1, "the next link's commands were counted against the ended link's queue")
        let applied = try #require(await writes.wait(forCount: 2))
        #expect(applied == [[0xE1], [0xE2]], "only the next link's commands are served")
        handlerCalled.open()
    }

    /// A confirmation that crosses its link's end is not a flood: it is not counted as dropped.
    @Test func aConfirmationAfterTheLinksEndIsNotCountedAsDropped() async throws {
        let server = GATTServer(preferredMTU: 517, clock: .continuous) { _, _, _ in }
        let bearer = Wire().bearer(peer: 0xC0FF_EE00_0001)
        bearer.close(with: .disconnected(reason: .remoteUserTerminatedConnection))
        server.receive([ATTOpcode.handleValueConfirmation.rawValue], from: bearer)
        server.receive([ATTOpcode.readRequest.rawValue, 0x01, 0x00], from: bearer)
        #expect(server.droppedPDUCount == 0)
        #expect(bearer.serverQueue.pendingCount == 0)
    }

    @Test func anEndedBearerSendsNothingAndSaysSo() async throws {
        let wire = Wire()
        let bearer = wire.bearer(peer: 0xC0FF_EE00_0001)
        bearer.close(with: .disconnected(reason: .connectionTimeout))
        let result = Mutex<Result<Void, HCIError>?>(nil)
        bearer.send([ATTOpcode.handleValueNotification.rawValue, 0x03, 0x00, 0x01]) { outcome in result.withLock { $0 = outcome } }
        #expect(wire.sent.isEmpty)
        guard case .failure(.connectionClosed(Self.handle))? = result.withLock({ $0 }) else {
            Issue.record("the completion did not hear the link had closed")
            return
        }
    }
}
