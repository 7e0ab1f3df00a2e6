import Foundation
import Glibc
import Synchronization

/// A file descriptor owned by a test: the other end of a transport (a listening or accepted
/// socket, a pty master). Blocking helpers all have a timeout so a broken transport fails
/// the test instead of hanging it. Closed on deinit if the test did not close it.
final class TestDescriptor: Sendable {
    private let descriptor: Mutex<Int32>

    init(_ descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    deinit { close() }

    /// The raw number; -1 once closed or taken.
    var raw: Int32 { descriptor.withLock { $0 } }

    /// Hands the descriptor over (e.g. to a transport) without closing it.
    func take() -> Int32 {
        descriptor.withLock { value in
            defer { value = -1 }
            return value
        }
    }

    func close() {
        let value = take()
        if value >= 0 { _ = Glibc.close(value) }
    }

    // MARK: - Creating

    /// A TCP listener on 127.0.0.1 with a port the kernel picked.
    static func listenTCP() throws -> (listener: TestDescriptor, port: UInt16) {
        let socket = try check(Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0), "socket")
        let listener = TestDescriptor(socket)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                _ = try check(bind(socket, generic, length), "bind")
                _ = try check(getsockname(socket, generic, &length), "getsockname")
            }
        }
        _ = try check(listen(socket, 4), "listen")
        return (listener, UInt16(bigEndian: address.sin_port))
    }

    /// A TCP listener on ::1 with a port the kernel picked.
    static func listenTCPv6Loopback() throws -> (listener: TestDescriptor, port: UInt16) {
        let socket = try check(Glibc.socket(AF_INET6, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0), "socket")
        let listener = TestDescriptor(socket)
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                _ = try check(bind(socket, generic, length), "bind")
                _ = try check(getsockname(socket, generic, &length), "getsockname")
            }
        }
        _ = try check(listen(socket, 4), "listen")
        return (listener, UInt16(bigEndian: address.sin6_port))
    }

    /// Whether this machine can listen on ::1 (some containers have IPv6 disabled).
    static let hasIPv6Loopback: Bool = (try? listenTCPv6Loopback()) != nil

    /// A TCP port on 127.0.0.1 that is bound (so nobody else takes it) but not listening:
    /// connecting to it is refused.
    static func boundButNotListeningTCP() throws -> (socket: TestDescriptor, port: UInt16) {
        let socket = try check(Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0), "socket")
        let owner = TestDescriptor(socket)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                _ = try check(bind(socket, generic, length), "bind")
                _ = try check(getsockname(socket, generic, &length), "getsockname")
            }
        }
        return (owner, UInt16(bigEndian: address.sin_port))
    }

    /// A Unix stream socket listening at `path`.
    static func listenUnix(path: String) throws -> TestDescriptor {
        let socket = try check(Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0), "socket")
        let listener = TestDescriptor(socket)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestFailure("path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                _ = try check(bind(socket, generic, socklen_t(MemoryLayout<sockaddr_un>.size)), "bind")
            }
        }
        _ = try check(listen(socket, 4), "listen")
        return listener
    }

    /// A connected pair of sockets (`SOCK_STREAM` or `SOCK_SEQPACKET`).
    static func socketPair(type: __socket_type = SOCK_STREAM) throws -> (TestDescriptor, TestDescriptor) {
        var pair: [Int32] = [-1, -1]
        _ = try check(socketpair(AF_UNIX, Int32(type.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair), "socketpair")
        return (TestDescriptor(pair[0]), TestDescriptor(pair[1]))
    }

    /// A fresh directory under /tmp (short, so Unix socket paths fit in `sun_path`).
    static func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/bluejay-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }
        }
        guard let created else {
            throw TestFailure("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        return String(cString: created)
    }

    // MARK: - I/O

    /// Accepts one connection.
    func accept(timeout: Duration = .seconds(10)) throws -> TestDescriptor {
        try waitFor(events: Int16(POLLIN), timeout: timeout)
        return TestDescriptor(try Self.check(Glibc.accept(raw, nil, nil), "accept"))
    }

    /// Reads exactly `count` bytes, however the kernel splits them.
    func readExactly(_ count: Int, timeout: Duration = .seconds(10)) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            try waitFor(events: Int16(POLLIN), timeout: timeout)
            var chunk = [UInt8](repeating: 0, count: min(count - bytes.count, 65_536))
            let read = chunk.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, $0.count) }
            guard read > 0 else {
                throw TestFailure("read returned \(read) after \(bytes.count) of \(count) bytes: \(String(cString: strerror(errno)))")
            }
            bytes += chunk[0..<read]
        }
        return bytes
    }

    /// Writes all of `bytes` (a test peer's side, blocking).
    func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(self.raw, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == ENOTSOCK {
                // A pty master: not a socket.
                let plain = bytes.withUnsafeBytes { raw in
                    Glibc.write(self.raw, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                }
                guard plain > 0 else { throw TestFailure("write failed: \(String(cString: strerror(errno)))") }
                offset += plain
                continue
            }
            guard written > 0 else { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    private func waitFor(events: Int16, timeout: Duration) throws {
        var descriptors = [pollfd(fd: raw, events: events, revents: 0)]
        let milliseconds = Int32(timeout.components.seconds * 1000)
        var ready: Int32
        repeat {
            ready = poll(&descriptors, 1, milliseconds)
        } while ready < 0 && errno == EINTR
        guard ready > 0 else { throw TestFailure("timed out after \(timeout) waiting on descriptor \(raw)") }
    }

    @discardableResult
    static func check(_ result: Int32, _ call: String) throws -> Int32 {
        guard result >= 0 else { throw TestFailure("\(call) failed: \(String(cString: strerror(errno)))") }
        return result
    }
}
