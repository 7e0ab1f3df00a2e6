import BluetoothCore
@testable import BluetoothTransport
import Foundation
import Glibc
import Synchronization
import Testing

/// The capture file: what is written, the bound on the writer's queue, and what happens to a
/// file that is already there.
@Suite("HCI capture", .timeLimit(.minutes(1)))
struct HCICaptureTests {
    let reset = H4Packet(.command, [0x03, 0x0C, 0x00])
    let resetComplete = H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
    let data = H4Packet(.acl, [0x40, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A])

    private func temporaryFile() throws -> String {
        try TestDescriptor.makeTemporaryDirectory() + "/capture.btsnoop"
    }

    private func read(_ path: String) throws -> (header: BTSnoop.FileHeader, records: [BTSnoop.Record]) {
        try BTSnoop.decodeFile(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    @Test func everyPacketIsWrittenWithItsDirectionInOrder() throws {
        let path = try temporaryFile()
        let capture = try HCICapture(path: path)
        capture.record(sent: reset)
        capture.record(received: [resetComplete, data])
        capture.record(sent: data)
        capture.close()
        let file = try read(path)
        #expect(file.header == BTSnoop.FileHeader(version: 1, datalink: 1002))
        #expect(try file.records.map { try $0.packet() } == [reset, resetComplete, data, data])
        #expect(file.records.map { $0.flags.contains(.received) } == [false, true, true, false])
        #expect(file.records.allSatisfy { $0.cumulativeDrops == 0 })
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        #expect(capture.statistics == HCICapture.Statistics(written: 4, dropped: 0, bytes: size))
        // The timestamps are now, by the real-time clock.
        let now = BTSnoop.timestamp(unixMicroseconds: Int64(Date().timeIntervalSince1970 * 1_000_000))
        for record in file.records { #expect(abs(record.timestamp - now) < 60_000_000) }
    }

    @Test func flushPutsWhatWasQueuedInTheFileWhileItStaysOpen() throws {
        let path = try temporaryFile()
        let capture = try HCICapture(path: path)
        capture.record(sent: reset)
        capture.flush()
        #expect(try read(path).records.count == 1)
        capture.record(received: [resetComplete])
        capture.flush()
        #expect(try read(path).records.count == 2)
        capture.close()
        capture.record(sent: reset)
        #expect(try read(path).records.count == 2, "a closed capture records nothing")
    }

    @Test func anExistingFileIsRefusedUnlessAppendingOrReplacing() throws {
        let path = try temporaryFile()
        let first = try HCICapture(path: path)
        first.record(sent: reset)
        first.close()

        #expect(throws: CaptureError.fileExists(path)) { _ = try HCICapture(path: path) }
        #expect(try read(path).records.count == 1, "refusing leaves the file as it was")

        let appended = try HCICapture(path: path, mode: .append)
        appended.record(received: [resetComplete])
        appended.close()
        #expect(try read(path).records.map { try $0.packet() } == [reset, resetComplete], "one header, the records after the old ones")

        let replaced = try HCICapture(path: path, mode: .replace)
        replaced.record(sent: data)
        replaced.close()
        #expect(try read(path).records.map { try $0.packet() } == [data])
    }

    @Test func appendingToAFileThatIsNotACaptureIsRefused() throws {
        let path = try temporaryFile()
        try Data("hello, world, not a capture".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: CaptureError.self) { _ = try HCICapture(path: path, mode: .append) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello, world, not a capture")
        // An empty file is a new capture.
        let empty = try temporaryFile()
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        let capture = try HCICapture(path: empty, mode: .append)
        capture.record(sent: reset)
        capture.close()
        #expect(try read(empty).records.count == 1)
    }

    @Test func aFileThatCannotBeCreatedIsATypedError() {
        #expect(throws: CaptureError.systemError("/nonexistent-directory/capture.btsnoop", errno: ENOENT)) {
            _ = try HCICapture(path: "/nonexistent-directory/capture.btsnoop")
        }
    }

    @Test func theQueueDropsAndCountsPastItsBoundAndTheRecordsSaySo() throws {
        let path = try temporaryFile()
        // No writer thread: the queue fills until the test flushes, as when the writer falls behind.
        let capture = try HCICapture(path: path, mode: .createNew, queueLimit: 2, queueByteLimit: 1 << 20, logger: .init(label: "test"),
                                     clock: { 42 }, startsWriter: false)
        capture.record(sent: reset)
        capture.record(received: [resetComplete, data, data])
        #expect(capture.statistics.dropped == 2)
        capture.flush()
        capture.record(sent: reset)
        capture.close()
        let records = try read(path).records
        #expect(try records.map { try $0.packet() } == [reset, resetComplete, reset])
        #expect(records.map(\.cumulativeDrops) == [0, 0, 2], "the record after the loss counts it")
        #expect(records.allSatisfy { $0.timestamp == 42 })
        #expect(capture.statistics.written == 3)
        #expect(capture.statistics.dropped == 2)
    }

    @Test func theQueueIsBoundedInBytesToo() {
        var queue = CaptureQueue(packetLimit: 100, byteLimit: 10)
        let first = queue.append(H4Packet(.acl, [UInt8](repeating: 0, count: 8)), received: true, timestamp: 0)
        let second = queue.append(H4Packet(.acl, [0, 0]), received: true, timestamp: 0)
        let third = queue.append(H4Packet(.event, []), received: true, timestamp: 0)
        #expect(first)
        #expect(!second, "9 + 3 bytes pass 10")
        #expect(third, "9 + 1 bytes fit")
        #expect(queue.dropped == 1)
        let taken = queue.takeAll()
        #expect(taken.map(\.dropsBefore) == [0, 1])
        let fourth = queue.append(H4Packet(.acl, [UInt8](repeating: 0, count: 8)), received: true, timestamp: 0)
        #expect(fourth, "taking frees the bytes")
    }

    @Test func aCapturingTransportRecordsBothWaysAndFlushesWhenTheTransportEnds() async throws {
        let path = try temporaryFile()
        let capture = try HCICapture(path: path)
        let base = LoopbackTransport()
        let transport = CapturingTransport(base, capture: capture)
        let received = Mutex<[TransportEvent]>([])
        transport.start { event in received.withLock { $0.append(event) } }
        try transport.send(reset)
        base.deliver([resetComplete])
        transport.close()
        // The file is complete once the receiver hears of the end: the transport flushed it first.
        #expect(try read(path).records.map { try $0.packet() } == [reset, resetComplete])
        #expect(try read(path).records.map(\.flags.rawValue) == [2, 3])
        #expect(base.sent == [reset])
        #expect(received.withLock { $0.count } == 2)
        capture.close()
    }
}

/// A transport whose packets the test delivers by hand, synchronously.
private final class LoopbackTransport: HCITransport {
    private let state = Mutex<(receiver: (@Sendable (TransportEvent) -> Void)?, sent: [H4Packet])>((nil, []))
    let name = "loopback"

    func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        state.withLock { $0.receiver = receiver }
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        state.withLock { $0.sent.append(packet) }
    }

    func close() {
        let receiver = state.withLock { state in
            defer { state.receiver = nil }
            return state.receiver
        }
        receiver?(.closed(nil))
    }

    func deliver(_ packets: [H4Packet]) {
        state.withLock { $0.receiver }?(.packets(packets))
    }

    var sent: [H4Packet] { state.withLock { $0.sent } }
}
