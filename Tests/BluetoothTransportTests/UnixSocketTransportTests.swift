import BluetoothTransport
import Foundation
import Glibc
import Testing

@Suite("Unix socket transport", .timeLimit(.minutes(1)))
struct UnixSocketTransportTests {
    @Test func roundTrip() async throws {
        let directory = try TestDescriptor.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/controller.sock"
        let listener = try TestDescriptor.listenUnix(path: path)

        let transport = try SystemTransports.open("unix:\(path)")
        defer { transport.closeInBackground() }
        #expect(transport.name == "unix:\(path)")
        let peer = try listener.accept()
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)

        try transport.send(H4DeframerTests.reset)
        #expect(try peer.readExactly(4) == H4DeframerTests.reset.framed)

        let reply = H4DeframerTests.resetComplete.framed + H4DeframerTests.sco.framed
        try peer.writeAll(Array(reply[..<5]))
        try peer.writeAll(Array(reply[5...]))
        let events = try await recorder.waitForEvents(count: 2)
        #expect(events.compactMap(\.packet) == [H4DeframerTests.resetComplete, H4DeframerTests.sco])

        peer.close()
        guard case .connectionLost? = try await recorder.waitForClose() else {
            Issue.record("expected connectionLost, got \(recorder.events)")
            return
        }
    }

    @Test func missingPathIsOpenFailedWithAHint() throws {
        let directory = try TestDescriptor.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/nobody-here.sock"
        let error = try #require(throws: TransportError.self) { _ = try UnixSocketTransport.connect(path: path) }
        guard case let .openFailed(name, code, hint) = error else {
            Issue.record("expected openFailed, got \(error)")
            return
        }
        #expect(name == "unix:\(path)")
        #expect(code == ENOENT)
        #expect(hint.contains(path))
    }

    @Test func staleSocketFileIsConnectionRefused() throws {
        let directory = try TestDescriptor.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/stale.sock"
        // Closing a listener leaves its socket file behind, with nobody accepting.
        try TestDescriptor.listenUnix(path: path).close()
        let error = try #require(throws: TransportError.self) { _ = try UnixSocketTransport.connect(path: path) }
        let failure = try #require(error.openFailure, "got \(error)")
        #expect(failure.errno == ECONNREFUSED)
        #expect(failure.hint.contains("stale"))
    }

    @Test func overlongPathIsInvalidSpecification() throws {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        let error = try #require(throws: TransportError.self) { _ = try UnixSocketTransport.connect(path: path) }
        let reason = try #require(error.invalidSpecificationReason, "got \(error)")
        #expect(reason.contains("107"))
    }
}
