#if canImport(Glibc)
import Glibc

/// The non-blocking Unix stream socket of a connection, and the system calls on it: connect,
/// and bytes with Unix file descriptors both ways (`SCM_RIGHTS` ancillary data, unix(7)).
/// Writes never raise SIGPIPE (`MSG_NOSIGNAL`); received descriptors are close-on-exec
/// (`MSG_CMSG_CLOEXEC`).
struct DBusSocket {
    let descriptor: Int32

    /// A failed system call's errno.
    struct Failure: Error {
        var code: Int32
    }

    /// Connects to `endpoint`, waiting at most until `deadline`, or until `stop` is readable.
    static func connect(
        to endpoint: DBusAddress.Endpoint, addressText: String, deadline: ContinuousClock.Instant, stop: Int32
    ) throws(DBusError) -> DBusSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
        let length: Int
        switch endpoint {
        case let .unixPath(path):
            let bytes = Array(path.utf8)
            // unix(7): sun_path holds at most 108 bytes including the terminating nul.
            guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
                throw .invalidAddress(addressText, reason: "a socket path must be 1 to \(capacity - 1) bytes long")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
            length = MemoryLayout<sockaddr_un>.size
        case let .unixAbstract(name):
            // An abstract name is a leading nul and the name's bytes, with no terminator; the
            // address length says where it ends.
            let bytes = [0] + Array(name.utf8)
            guard bytes.count <= capacity else {
                throw .invalidAddress(addressText, reason: "an abstract socket name must be at most \(capacity - 1) bytes long")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
            length = pathOffset + bytes.count
        }

        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw .systemCallFailed("socket(AF_UNIX)", errno: errno) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(length)) }
        }
        if result != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EINTR else {
                _ = Glibc.close(descriptor)
                throw .connectFailed(address: addressText, errno: code, hint: hint(for: code, endpoint: endpoint))
            }
            do throws(DBusError) {
                guard try waitUntil(descriptor, POLLOUT, deadline: deadline, stop: stop) else {
                    throw .connectFailed(address: addressText, errno: ETIMEDOUT, hint: "The bus did not accept the connection in time")
                }
                var outcome: Int32 = 0
                var outcomeLength = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &outcome, &outcomeLength) == 0 else {
                    throw .systemCallFailed("getsockopt(SO_ERROR)", errno: errno)
                }
                guard outcome == 0 else { throw .connectFailed(address: addressText, errno: outcome, hint: hint(for: outcome, endpoint: endpoint)) }
            } catch {
                _ = Glibc.close(descriptor)
                throw error
            }
        }
        return DBusSocket(descriptor: descriptor)
    }

    static func hint(for code: Int32, endpoint: DBusAddress.Endpoint) -> String {
        let place: String
        switch endpoint {
        case let .unixPath(path): place = path
        case let .unixAbstract(name): place = "@" + name
        }
        switch code {
        case ENOENT: return "There is no socket at \(place): is the bus (dbus-daemon or dbus-broker) running?"
        case ECONNREFUSED: return "Nothing accepts connections at \(place): the bus may have exited and left a stale socket"
        case EACCES, EPERM: return "No permission to connect to \(place): check the socket's owner and mode"
        case EAGAIN: return "The bus's connection backlog is full; try again"
        default: return ""
        }
    }

    /// Waits until `descriptor` has one of `events`: true, or false at `deadline`. Throws
    /// ``DBusError/cancelled`` when `stop` becomes readable first.
    static func waitUntil(_ descriptor: Int32, _ events: Int32, deadline: ContinuousClock.Instant?, stop: Int32) throws(DBusError) -> Bool {
        while true {
            var descriptors = [pollfd(fd: descriptor, events: Int16(events), revents: 0), pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return false }
                let (seconds, attoseconds) = left.components
                timeout = Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            }
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .systemCallFailed("poll", errno: errno)
            }
            if descriptors[1].revents != 0 { throw .cancelled }
            if descriptors[0].revents != 0 { return true }
        }
    }

    // MARK: - Bytes and descriptors

    /// `cmsghdr` rounding (CMSG_ALIGN, CMSG_LEN, CMSG_SPACE of <sys/socket.h>, which Swift
    /// does not import).
    private static func align(_ length: Int) -> Int {
        let word = MemoryLayout<Int>.size
        return (length + word - 1) & ~(word - 1)
    }

    private static var headerLength: Int { align(MemoryLayout<cmsghdr>.size) }

    private static func space(_ length: Int) -> Int { headerLength + align(length) }

    /// Sends what it can of `bytes` without blocking, with `fileDescriptors` (only when some are
    /// given: they travel with the first byte). Returns the bytes sent, or the errno.
    func send(_ bytes: UnsafeRawBufferPointer, fileDescriptors: [Int32]) -> Result<Int, Failure> {
        var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        var header = msghdr()
        let controlLength = fileDescriptors.isEmpty ? 0 : Self.space(fileDescriptors.count * MemoryLayout<Int32>.size)
        let control = UnsafeMutableRawPointer.allocate(byteCount: max(controlLength, 1), alignment: MemoryLayout<Int>.alignment)
        defer { control.deallocate() }
        if controlLength > 0 {
            control.initializeMemory(as: UInt8.self, repeating: 0, count: controlLength)
            let message = control.assumingMemoryBound(to: cmsghdr.self)
            message.pointee.cmsg_len = Self.headerLength + fileDescriptors.count * MemoryLayout<Int32>.size
            message.pointee.cmsg_level = SOL_SOCKET
            message.pointee.cmsg_type = Int32(SCM_RIGHTS)
            let data = control + Self.headerLength
            for (index, descriptor) in fileDescriptors.enumerated() {
                data.storeBytes(of: descriptor, toByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self)
            }
        }
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
            header.msg_iov = vectorPointer
            header.msg_iovlen = 1
            if controlLength > 0 {
                header.msg_control = control
                header.msg_controllen = controlLength
            }
            while true {
                let sent = sendmsg(descriptor, &header, Int32(MSG_NOSIGNAL))
                if sent >= 0 { return .success(sent) }
                if errno == EINTR { continue }
                return .failure(Failure(code: errno))
            }
        }
    }

    /// The most descriptors one read takes (SCM_MAX_FD).
    static let maximumDescriptorsPerRead = 253

    /// Reads what has arrived into `buffer`, and the descriptors that came with it. Returns the
    /// byte count (0: the peer closed the connection), or the errno. Descriptors the kernel
    /// could not deliver (a truncated control message) are an `EMSGSIZE` failure.
    func receive(into buffer: UnsafeMutableRawBufferPointer, fileDescriptors: inout [DBusFileDescriptor]) -> Result<Int, Failure> {
        var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        let controlLength = Self.space(Self.maximumDescriptorsPerRead * MemoryLayout<Int32>.size)
        let control = UnsafeMutableRawPointer.allocate(byteCount: controlLength, alignment: MemoryLayout<Int>.alignment)
        defer { control.deallocate() }
        control.initializeMemory(as: UInt8.self, repeating: 0, count: controlLength)
        var header = msghdr()
        let received: Int = withUnsafeMutablePointer(to: &vector) { vectorPointer in
            header.msg_iov = vectorPointer
            header.msg_iovlen = 1
            header.msg_control = control
            header.msg_controllen = controlLength
            while true {
                let count = recvmsg(descriptor, &header, Int32(MSG_CMSG_CLOEXEC))
                if count < 0, errno == EINTR { continue }
                return count
            }
        }
        if received < 0 { return .failure(Failure(code: errno)) }
        // Walk the control messages (CMSG_FIRSTHDR / CMSG_NXTHDR), taking every descriptor so
        // that none leaks, even from a peer that sends more than a message claims.
        var offset = 0
        let available = Int(header.msg_controllen)
        while offset + Self.headerLength <= available {
            let message = (control + offset).load(as: cmsghdr.self)
            let length = Int(message.cmsg_len)
            guard length >= Self.headerLength, offset + length <= available else { break }
            if message.cmsg_level == SOL_SOCKET, message.cmsg_type == Int32(SCM_RIGHTS) {
                let count = (length - Self.headerLength) / MemoryLayout<Int32>.size
                for index in 0..<count {
                    let received = (control + offset + Self.headerLength).loadUnaligned(fromByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self)
                    fileDescriptors.append(DBusFileDescriptor(taking: received))
                }
            }
            offset += Self.align(length)
        }
        if header.msg_flags & Int32(MSG_CTRUNC) != 0 { return .failure(Failure(code: EMSGSIZE)) }
        return .success(received)
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
#endif
