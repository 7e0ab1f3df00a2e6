#if canImport(Glibc)
import Glibc

/// Opens H4-over-TCP transports (`tcp:HOST:PORT`), as served by Bumble's virtual
/// controllers or a network bridge to a UART.
public enum TCPTransport {
    /// How long ``connect(host:port:timeout:)`` waits for each address by default.
    public static let defaultConnectTimeout: Duration = .seconds(10)

    /// Resolves `host` (a name, an IPv4 or an IPv6 address) and connects to the first
    /// address that answers, with `TCP_NODELAY` so small HCI packets are not held back.
    public static func connect(
        host: String,
        port: UInt16,
        timeout: Duration = defaultConnectTimeout
    ) throws(TransportError) -> FileDescriptorTransport {
        let name = TransportSpecification.tcp(host: host, port: port).description
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var addresses: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &addresses)
        guard status == 0, let first = addresses else {
            // getaddrinfo(3) reports its own codes; only EAI_SYSTEM leaves one in errno.
            let code = status == EAI_SYSTEM ? errno : EHOSTUNREACH
            let reason = String(cString: gai_strerror(status))
            throw .openFailed(name, errno: code, hint: "cannot resolve host \"\(host)\" (\(reason)); check the host name")
        }
        defer { freeaddrinfo(first) }

        var lastError = SystemCallError(code: EHOSTUNREACH)
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            next = entry.pointee.ai_next
            let socket: Int32
            do throws(SystemCallError) {
                socket = try connectSocket(to: entry.pointee, timeout: timeout)
            } catch {
                lastError = error
                continue
            }
            return try FileDescriptorTransport(name: name, fileDescriptor: socket, framing: .stream)
        }
        throw .openFailed(name, errno: lastError.code, hint: hint(for: lastError.code, host: host, port: port, timeout: timeout))
    }

    private static func connectSocket(to address: addrinfo, timeout: Duration) throws(SystemCallError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        let socket = Glibc.socket(address.ai_family, type, address.ai_protocol)
        guard socket >= 0 else { throw .current }
        do throws(SystemCallError) {
            guard let target = address.ai_addr else { throw SystemCallError(code: EINVAL) }
            try SystemCalls.connect(socket, to: target, length: address.ai_addrlen, timeout: timeout)
        } catch {
            SystemCalls.closeDescriptor(socket)
            throw error
        }
        // HCI traffic is many small packets where latency matters: disable Nagle's algorithm.
        // Not fatal if refused, the transport only gets slower.
        var enabled: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &enabled, socklen_t(MemoryLayout<Int32>.size))
        return socket
    }

    static func hint(for code: Int32, host: String, port: UInt16, timeout: Duration) -> String {
        switch code {
        case ECONNREFUSED:
            // Bumble's controllers app takes exactly two transports and links their controllers.
            let other = port == UInt16.max ? port - 1 : port + 1
            return "Nothing is listening on \(host) port \(port). Is the controller running there (for example "
                + "two linked virtual controllers: `python -m bumble.apps.controllers tcp-server:_:\(port) tcp-server:_:\(other)`)?"
        case ETIMEDOUT:
            return "No answer within \(timeout); check the host, the port and any firewall"
        case ENETUNREACH, EHOSTUNREACH:
            return "The host cannot be reached; check the address and the network"
        default:
            return ""
        }
    }
}
#endif
