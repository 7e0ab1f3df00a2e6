#if canImport(Glibc)
import Glibc

/// Opens H4-over-Unix-domain-socket transports (`unix:PATH`).
public enum UnixSocketTransport {
    /// Connects a stream socket to the controller listening at `path`.
    public static func connect(path: String) throws(TransportError) -> FileDescriptorTransport {
        let name = TransportSpecification.unix(path: path).description
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        // unix(7): sun_path holds at most 108 bytes including the terminating NUL.
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !pathBytes.isEmpty, pathBytes.count < capacity, !pathBytes.contains(0) else {
            throw .invalidSpecification(name, reason: "a Unix socket path must be 1 to \(capacity - 1) bytes long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: pathBytes) }

        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else {
            throw .openFailed(name, errno: errno, hint: "")
        }
        do throws(SystemCallError) {
            try withUnsafePointer(to: &address) { pointer throws(SystemCallError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic throws(SystemCallError) in
                    try SystemCalls.connect(
                        socket,
                        to: generic,
                        length: socklen_t(MemoryLayout<sockaddr_un>.size),
                        timeout: TCPTransport.defaultConnectTimeout
                    )
                }
            }
        } catch {
            SystemCalls.closeDescriptor(socket)
            throw .openFailed(name, errno: error.code, hint: hint(for: error.code, path: path))
        }
        return try FileDescriptorTransport(name: name, fileDescriptor: socket, framing: .stream)
    }

    static func hint(for code: Int32, path: String) -> String {
        switch code {
        case ENOENT:
            return "There is no socket at \(path); is the controller running and listening there?"
        case ECONNREFUSED:
            return "Nothing accepts connections on \(path); the controller may have exited and left a stale socket file"
        case EACCES, EPERM:
            return "No permission to connect to \(path); check the owner and mode of the socket and its directory"
        case ENOTDIR:
            return "A part of \(path) is not a directory"
        case EAGAIN:
            return "The controller's connection backlog is full; try again"
        default:
            return ""
        }
    }
}
#endif
