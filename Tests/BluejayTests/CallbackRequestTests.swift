@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// The callback API's reads, and writes with response, of a characteristic or descriptor
/// already found begin without a task: the request goes out from the caller's thread and a
/// whole value, or the acknowledgement, is reported from the thread its response arrives on.
/// Everything else they can meet goes on in a task, as the `async` API's requests do: these
/// tests hold the two to the same outcomes, and count what the peripheral was asked.
@Suite("Bluejay callback reads and writes begun without a task", .timeLimit(.minutes(1)))
struct CallbackRequestTests {
    static let service = ServiceIdentifier(uuid: "FEC0")
    /// Read first, so that the service's characteristics are known.
    static let plain = CharacteristicIdentifier(uuid: "FEC1", service: service)
    /// 100 bytes: five parts at the ATT MTU of 23.
    static let long = CharacteristicIdentifier(uuid: "FEC2", service: service)
    /// Readable on an encrypted link only.
    static let encrypted = CharacteristicIdentifier(uuid: "FEC3", service: service)
    /// Always refused, with an application error.
    static let refused = CharacteristicIdentifier(uuid: "FEC4", service: service)
    /// Answers when the test opens its gate.
    static let held = CharacteristicIdentifier(uuid: "FEC5", service: service)
    /// Writable, on an encrypted link only for ``protectedWritable``; each write is recorded.
    static let writable = CharacteristicIdentifier(uuid: "FEC6", service: service)
    static let protectedWritable = CharacteristicIdentifier(uuid: "FEC7", service: service)
    /// A writable descriptor of ``writable``; each write is recorded.
    static let writableDescriptor = DescriptorIdentifier(uuid: "FEC8", characteristic: writable)
    static let longValue = (0..<100).map { UInt8($0) }

    /// The peripheral's side: what it was asked, and the gate of ``held``.
    final class Peer: Sendable {
        let peripheral: VirtualPeripheral
        let gate = TestGate()
        /// The offset of every request for ``long``, and how many for ``refused``.
        let longOffsets = Mutex<[Int]>([])
        let refusals = Mutex(0)
        /// What each write request carried, by characteristic, in order.
        let writes = Mutex<[String]>([])

        init(_ peripheral: VirtualPeripheral) { self.peripheral = peripheral }
    }

    private func start(_ address: String, options: @escaping (inout StartOptions) -> Void = { _ in }) async throws -> (Bluejay, Peer) {
        let link = VirtualLink()
        let peer = Peer(try await VirtualPeripheral.start(on: link, name: "Sensor", address: address))
        _ = try await peer.peripheral.host.server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0xFEC0)), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC1)), properties: [.read], value: [0x11]),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC2)), properties: [.read], onRead: { request in
                peer.longOffsets.withLock { $0.append(request.offset) }
                return .value(Self.longValue)
            }),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC3)), properties: [.read],
                                         permissions: [.readable, .readEncryptionRequired], value: [0x33]),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC4)), properties: [.read], onRead: { _ in
                peer.refusals.withLock { $0 += 1 }
                return .error(ATTErrorCode(rawValue: 0x80))
            }),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC5)), properties: [.read], onRead: { [gate = peer.gate] _ in
                do { try await gate.wait() } catch { return .error(.unlikelyError) }
                return .value([0x55])
            }),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC6)), properties: [.read, .write], descriptors: [
                GATTDescriptorDefinition(uuid: BluetoothUUID(UInt16(0xFEC8)), permissions: .readWrite, onWrite: { request in
                    peer.writes.withLock { $0.append("FEC8 \(request.value.count) \(request.kind.rawValue)") }
                    return .success
                }),
            ], onWrite: { request in
                peer.writes.withLock { $0.append("FEC6 \(request.value.count) \(request.kind.rawValue)") }
                return .success
            }),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFEC7)), properties: [.read, .write],
                                         permissions: [.readable, .writeable, .writeEncryptionRequired], onWrite: { request in
                peer.writes.withLock { $0.append("FEC7 \(request.value.count) \(request.kind.rawValue)") }
                return .success
            }),
        ]))
        let bluejay = try await startBluejay(on: link) { startOptions in
            startOptions.hostConfiguration.preferredATTMTU = 23
            options(&startOptions)
        }
        try await bluejay.connect(peer.peripheral.identifier, timeout: .seconds(10))
        #expect(try await read(Self.plain, bluejay) == .success(Data([0x11])), "the first read finds the service")
        return (bluejay, peer)
    }

    private func read(_ characteristic: CharacteristicIdentifier, _ bluejay: Bluejay) async throws -> ReadResult<Data> {
        try await callback("the read of \(characteristic)") { done in bluejay.read(from: characteristic) { done($0) } }
    }

    private func asyncRead(_ characteristic: CharacteristicIdentifier, _ bluejay: Bluejay) async -> ReadResult<Data> {
        do {
            return .success(try await bluejay.read(from: characteristic))
        } catch {
            return .failure(error)
        }
    }

    private func describe(_ result: WriteResult) -> String {
        switch result {
        case .success: return "written"
        case let .failure(error): return "\(error)"
        }
    }

    private func asyncWrite(_ characteristic: CharacteristicIdentifier, _ value: Data, _ bluejay: Bluejay) async -> WriteResult {
        do {
            return .success(try await bluejay.write(to: characteristic, value: value))
        } catch {
            return .failure(error)
        }
    }

    private func stop(_ bluejay: Bluejay, _ peer: Peer) async {
        await bluejay.stop()
        await peer.peripheral.shutdown()
    }

    @Test("A known characteristic's value, short or long, and a known descriptor's")
    func values() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:01")
        #expect(try await read(Self.plain, bluejay) == .success(Data([0x11])))
        #expect(try await read(Self.long, bluejay) == .success(Data(Self.longValue)))
        // One Read Request, then Read Blob Requests from where it stopped: the first part is
        // not asked for twice.
        #expect(peer.longOffsets.withLock { $0 } == [0, 22, 44, 66, 88])
        for _ in 0..<2 {
            let description: ReadResult<String> = try await callback { done in bluejay.read(from: HeartRate.userDescription) { done($0) } }
            #expect(description == .success("Body Sensor Location"))
        }
        await stop(bluejay, peer)
    }

    @Test("Reads of a known value make no task; one to be discovered does")
    func noTask() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:07")
        let before = bluejay.runner.tasksMade
        for _ in 0..<5 { #expect(try await read(Self.plain, bluejay) == .success(Data([0x11]))) }
        let description: ReadResult<String> = try await callback { done in bluejay.read(from: HeartRate.userDescription) { done($0) } }
        #expect(description == .success("Body Sensor Location"))
        #expect(bluejay.runner.tasksMade == before + 1, "only the descriptor's discovery ran in a task")
        let again: ReadResult<String> = try await callback { done in bluejay.read(from: HeartRate.userDescription) { done($0) } }
        #expect(again == .success("Body Sensor Location"))
        #expect(bluejay.runner.tasksMade == before + 1)
        await stop(bluejay, peer)
    }

    @Test("Writes with response of a known value make no task; a long one goes on in one, whole")
    func writes() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:09")
        let write = { (characteristic: CharacteristicIdentifier, value: Data) async throws -> String in
            self.describe(try await callback { done in bluejay.write(to: characteristic, value: value) { done($0) } })
        }
        let before = bluejay.runner.tasksMade
        // 0 and 20 bytes (MTU - 3 at an MTU of 23): one Write Request each, no task.
        #expect(try await write(Self.writable, Data()) == "written")
        for index in 0..<3 { #expect(try await write(Self.writable, Data(repeating: UInt8(index), count: 20)) == "written") }
        #expect(bluejay.runner.tasksMade == before, "no task for writes that fit in one request")
        // 21 bytes (MTU - 2) and 60: prepared writes, each in a task, each arriving whole.
        #expect(try await write(Self.writable, Data(repeating: 9, count: 21)) == "written")
        #expect(try await write(Self.writable, Data(Self.longValue.prefix(60))) == "written")
        #expect(bluejay.runner.tasksMade == before + 2)
        #expect(peer.writes.withLock { $0 } == ["FEC6 0 request", "FEC6 20 request", "FEC6 20 request", "FEC6 20 request",
                                                 "FEC6 21 preparedWrite", "FEC6 60 preparedWrite"])
        // A refusal (FEC1 is read-only) ends as the async API's write does.
        let refused = try await write(Self.plain, Data([1]))
        let asked = describe(await asyncWrite(Self.plain, Data([1]), bluejay))
        #expect(refused.contains("FEC1") && refused == asked)
        await stop(bluejay, peer)
    }

    @Test("A write to a known descriptor makes no task; one to be discovered does")
    func descriptorWrites() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:0B")
        let before = bluejay.runner.tasksMade
        for value in [Data([1]), Data([2, 2])] {
            let written: WriteResult = try await callback { done in bluejay.write(to: Self.writableDescriptor, value: value) { done($0) } }
            #expect(describe(written) == "written")
        }
        #expect(bluejay.runner.tasksMade == before + 1, "only the first write, which discovered the descriptor, ran in a task")
        #expect(peer.writes.withLock { $0 } == ["FEC8 1 request", "FEC8 2 request"])
        await stop(bluejay, peer)
    }

    @Test("A write refused for lack of encryption encrypts the link and is made once")
    func writeSecurityRaise() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:0A")
        let before = bluejay.runner.tasksMade
        let written: WriteResult = try await callback { done in bluejay.write(to: Self.protectedWritable, value: Data([7])) { done($0) } }
        #expect(describe(written) == "written")
        #expect(bluejay.runner.tasksMade == before + 1, "begun without a task; the raise went on in one")
        #expect(bluejay.linkSecurity?.isEncrypted == true)
        #expect(peer.writes.withLock { $0 } == ["FEC7 1 request"])
        await stop(bluejay, peer)
    }

    @Test("A read asked for from a cancelled task is still made: the callback API's requests are not the task's")
    func fromACancelledTask() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:08")
        let result = AwaitableLog<ReadResult<Data>>()
        let asking = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            #expect(Task.isCancelled)
            bluejay.read(from: Self.plain) { result.append($0) }
        }
        await asking.value
        #expect(await result.wait(forCount: 1, timeout: hangGuard)?.first == .success(Data([0x11])))
        await stop(bluejay, peer)
    }

    @Test("A read refused for lack of encryption encrypts the link and is answered")
    func securityRaise() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:02")
        #expect(bluejay.linkSecurity?.isEncrypted == false)
        #expect(try await read(Self.encrypted, bluejay) == .success(Data([0x33])))
        #expect(bluejay.linkSecurity?.isEncrypted == true)
        await stop(bluejay, peer)
    }

    @Test("A refusal is reported as the async API reports it, after one request")
    func refusal() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:03")
        let started = try await read(Self.refused, bluejay)
        guard case let .failure(refusedError) = started, case let .attError(code, operation, handle) = refusedError else {
            Issue.record("expected the peer's refusal, got \(started)")
            return
        }
        #expect(code == ATTErrorCode(rawValue: 0x80) && operation.contains("FEC4") && handle != 0)
        #expect(peer.refusals.withLock { $0 } == 1, "the refused read is not asked again")
        let asked: ReadResult<Data> = await asyncRead(Self.refused, bluejay)
        #expect(asked == started, "the async API's read is refused the same way")
        #expect(peer.refusals.withLock { $0 } == 2)
        await stop(bluejay, peer)
    }

    @Test("A read past its time limit times out, and the queue goes on once the answer comes")
    func timeLimit() async throws {
        let clock = ManualClock()
        let (bluejay, peer) = try await start("D2:00:00:00:00:04") { options in
            options.operationTimeout = .seconds(0.5)
            options.hostConfiguration.clock = .manual(clock)
        }
        let result = AwaitableLog<ReadResult<Data>>()
        bluejay.read(from: Self.held) { result.append($0) }
        let next = AwaitableLog<ReadResult<Data>>()
        bluejay.read(from: Self.plain) { next.append($0) }
        try await peer.gate.waitForArrivals(1)
        clock.advance(by: .milliseconds(499))
        clock.advance(by: .milliseconds(1))
        let outcome = try #require(await result.wait(forCount: 1, timeout: hangGuard)?.first)
        guard case let .failure(BluejayError.timedOut(operation, after)) = outcome else {
            Issue.record("expected a time-out, got \(outcome)")
            return
        }
        #expect(operation.contains("FEC5") && after == .milliseconds(500))
        peer.gate.open()
        #expect(await next.wait(forCount: 1, timeout: hangGuard)?.first == .success(Data([0x11])))
        await stop(bluejay, peer)
    }

    @Test("cancelEverything ends a read waiting for its answer; the next read runs")
    func cancellation() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:05")
        let result = AwaitableLog<ReadResult<Data>>()
        bluejay.read(from: Self.held) { result.append($0) }
        try await peer.gate.waitForArrivals(1)
        bluejay.cancelEverything(shouldDisconnect: false)
        let outcome = try #require(await result.wait(forCount: 1, timeout: hangGuard)?.first)
        guard case .failure(BluejayError.cancelled) = outcome else {
            Issue.record("expected the cancellation, got \(outcome)")
            return
        }
        peer.gate.open()
        #expect(try await read(Self.plain, bluejay) == .success(Data([0x11])))
        await stop(bluejay, peer)
    }

    @Test("A read waiting for its answer when the link drops reports the disconnection")
    func disconnection() async throws {
        let (bluejay, peer) = try await start("D2:00:00:00:00:06")
        let result = AwaitableLog<ReadResult<Data>>()
        bluejay.read(from: Self.held) { result.append($0) }
        try await peer.gate.waitForArrivals(1)
        await peer.peripheral.disconnectAll()
        let outcome = try #require(await result.wait(forCount: 1, timeout: hangGuard)?.first)
        guard case let .failure(BluejayError.disconnected(peripheral, _)) = outcome else {
            Issue.record("expected the disconnection, got \(outcome)")
            return
        }
        #expect(peripheral == peer.peripheral.identifier)
        peer.gate.open()
        await stop(bluejay, peer)
    }
}
