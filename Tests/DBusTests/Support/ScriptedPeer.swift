@testable import DBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus server written by the test, byte by byte: it listens on a Unix socket in a temporary
/// directory, plays the server side of the SASL handshake as told, then reads our messages and
/// writes whatever the test wants, well-formed or not. Its blocking socket calls run on threads
/// of their own; every read is bounded by a timeout.
final class ScriptedPeer: @unchecked Sendable {
    let directory: URL
    let path: String
    private let listener: Int32
    private var connection: Int32 = -1
    private var buffer: [UInt8] = []

    static let guid = "0123456789abcdef0123456789abcdef"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-peer-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("socket").path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 4) == 0 else { throw DaemonError("cannot listen on \(path): \(errno)") }
    }

    deinit {
        close()
        Glibc.close(listener)
        try? FileManager.default.removeItem(at: directory)
    }

    var address: String { "unix:path=\(path)" }

    func close() {
        if connection >= 0 { Glibc.close(connection) }
        connection = -1
    }

    /// Accepts the client and answers its SASL lines: `answers` maps a line's first word to the
    /// lines sent back (by default OK, AGREE_UNIX_FD). Returns the lines the client sent, up to
    /// BEGIN, or until an answer is "silence" (the peer stops answering and reading).
    func acceptAndAuthenticate(_ answers: [String: [String]] = [
        "AUTH": ["OK \(ScriptedPeer.guid)"], "NEGOTIATE_UNIX_FD": ["AGREE_UNIX_FD"],
    ]) async throws -> [String] {
        try await onThread { [self] in
            var pollDescriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pollDescriptor, 1, 20_000) == 1 else { throw DaemonError("no client connected") }
            connection = accept(listener, nil, nil)
            guard connection >= 0 else { throw DaemonError("accept failed") }
            // The path is not needed once the client is in: nothing is left behind, whenever the
            // test process ends.
            try? FileManager.default.removeItem(at: directory)
            guard try readBytes(1) == [0] else { throw DaemonError("the client did not start with a nul byte") }
            var lines: [String] = []
            while true {
                let line = try readLine()
                lines.append(line)
                if line == "BEGIN" { return lines }
                let replies = answers[String(line.prefix { $0 != " " })] ?? ["ERROR"]
                if replies == ["silence"] { return lines }
                for reply in replies { try writeBytes(Array((reply + "\r\n").utf8)) }
            }
        }
    }

    /// The next message we sent.
    func readMessage() async throws -> DBusMessage {
        try await onThread { [self] in
            while true {
                if let length = try DBusMessage.framedLength(buffer[...]), buffer.count >= length {
                    defer { buffer.removeFirst(length) }
                    return try DBusMessage.decode(Array(buffer[..<length]))
                }
                buffer += try readSome()
            }
        }
    }

    /// Writes `bytes`, with `descriptors` as SCM_RIGHTS.
    func write(_ bytes: [UInt8], descriptors: [Int32] = []) async throws {
        try await onThread { [self] in
            let socket = DBusSocket(descriptor: connection)
            var offset = 0
            var first = true
            while offset < bytes.count {
                let result = bytes.withUnsafeBytes { socket.send(UnsafeRawBufferPointer(rebasing: $0[offset...]), fileDescriptors: first ? descriptors : []) }
                guard case let .success(count) = result else { throw DaemonError("write failed") }
                offset += count
                first = false
            }
        }
    }

    /// Sends `message` (its serial given) as a well-formed message.
    func send(_ message: DBusMessage) async throws {
        let encoded = try message.encode()
        try await write(encoded.bytes, descriptors: encoded.fileDescriptors.compactMap(\.descriptor))
    }

    /// Whether the client closed its end (a read returns end of file within the timeout).
    func clientClosed() async throws -> Bool {
        try await onThread { [self] in
            while true {
                let bytes = try readSome(allowEnd: true)
                if bytes.isEmpty { return true }
                buffer += bytes
            }
        }
    }

    // MARK: - Blocking helpers (on a thread of their own)

    private func readSome(allowEnd: Bool = false) throws -> [UInt8] {
        var pollDescriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&pollDescriptor, 1, 20_000) == 1 else { throw DaemonError("the client sent nothing for 20 s") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        if count == 0, allowEnd { return [] }
        guard count > 0 else { throw DaemonError("the client closed the connection") }
        return Array(chunk[..<count])
    }

    private func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { buffer += try readSome() }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<end].filter { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
                buffer.removeFirst(end + 1)
                return line
            }
            buffer += try readSome()
        }
    }

    private func writeBytes(_ bytes: [UInt8]) throws {
        let written = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard written == bytes.count else { throw DaemonError("write failed") }
    }

    private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
