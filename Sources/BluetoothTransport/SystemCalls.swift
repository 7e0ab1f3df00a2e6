#if canImport(Glibc)
import Glibc

/// An operating-system error number, thrown by the internal system-call helpers and turned
/// into a ``TransportError`` (with a hint) by the opener that knows what was being opened.
struct SystemCallError: Error, Equatable {
    var code: Int32

    /// The calling thread's `errno`; read it right after the failing call.
    static var current: SystemCallError { SystemCallError(code: errno) }
}

/// Thin wrappers around the POSIX calls the transports share.
enum SystemCalls {
    /// Closes a descriptor this module owns. close(2): on Linux the descriptor is released
    /// even when close fails (also with EINTR), so it must never be retried.
    static func closeDescriptor(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    static func setNonBlocking(_ descriptor: Int32) throws(SystemCallError) {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0 else { throw .current }
        guard fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { throw .current }
    }

    static func isSocket(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFSOCK
    }

    /// Whether `descriptor` is a TCP socket (SO_PROTOCOL, socket(7)).
    static func isTCPSocket(_ descriptor: Int32) -> Bool {
        var proto: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PROTOCOL, &proto, &length) == 0 else { return false }
        return proto == Int32(IPPROTO_TCP)
    }

    /// Makes a TCP socket acknowledge what it has received at once (TCP_QUICKACK, tcp(7)).
    /// Linux leaves quick-ACK mode as it goes, so this holds only until the next reads.
    static func acknowledgeAtOnce(_ descriptor: Int32) {
        var enabled: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_QUICKACK, &enabled, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A connected pair of non-blocking, close-on-exec descriptors used as a self-pipe.
    /// (A socket pair, because Glibc's module does not export pipe2(2) and pipe(2) followed by
    /// fcntl(2) would leave a window in which a concurrent exec inherits the descriptors.)
    static func makePipe() throws(SystemCallError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else { throw .current }
        return (descriptors[0], descriptors[1])
    }

    /// poll(2), retried on EINTR with the time that is left. `timeout: nil` waits forever.
    /// Returns the number of ready descriptors, 0 on timeout.
    static func poll(_ descriptors: inout [pollfd], timeout: Duration?) throws(SystemCallError) -> Int32 {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = clock.now.duration(to: deadline)
                milliseconds = left <= .zero ? 0 : Int32(clamping: Self.milliseconds(left))
            }
            let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready >= 0 { return ready }
            let error = SystemCallError.current
            guard error.code == EINTR else { throw error }
        }
    }

    /// Connects a socket, waiting at most `timeout`. The socket may be blocking or not.
    static func connect(
        _ descriptor: Int32,
        to address: UnsafePointer<sockaddr>,
        length: socklen_t,
        timeout: Duration
    ) throws(SystemCallError) {
        if Glibc.connect(descriptor, address, length) == 0 { return }
        let error = SystemCallError.current
        // connect(2): a non-blocking socket reports EINPROGRESS and completes later, and an
        // interrupted connect (EINTR) also goes on asynchronously; in both cases wait until
        // the socket is writable, then read the outcome from SO_ERROR.
        guard error.code == EINPROGRESS || error.code == EINTR else { throw error }
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)]
        guard try poll(&descriptors, timeout: timeout) > 0 else { throw SystemCallError(code: ETIMEDOUT) }
        var outcome: Int32 = 0
        var outcomeLength = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &outcome, &outcomeLength) == 0 else { throw .current }
        guard outcome == 0 else { throw SystemCallError(code: outcome) }
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        // Round up so a short remaining wait does not become a busy loop of zero timeouts.
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (total, carry) = whole.addingReportingOverflow(fraction)
        return overflow || carry ? Int64.max : total
    }
}
#endif
