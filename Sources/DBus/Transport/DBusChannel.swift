#if canImport(Glibc)
import DequeModule
import Foundation
import Glibc
import Synchronization

/// The byte stream of one connection: it connects and authenticates, then cuts what it reads
/// into messages and writes the messages it is given, with their Unix file descriptors.
///
/// One thread of its own does all of it (connect, SASL, reads, and the writes that cannot
/// finish at once), waiting in `poll` on the socket and on a self-pipe that ``close(_:)`` and
/// ``send(_:)`` write to. It hands each message to the receiver, in order, on that thread,
/// and ends with exactly one `.closed`. Senders never block: a message is written at once as
/// far as the socket takes it, and the rest waits in a bounded queue that the thread drains.
final class DBusChannel: Sendable {
    enum Event: Sendable {
        case message(DBusMessage)
        /// The last event: why the channel ended.
        case closed(DBusError)
    }

    struct Limits: Sendable {
        /// The longest message accepted from the peer.
        var maximumMessageLength: Int
        /// The most bytes waiting to be written (a single larger message is still taken when
        /// nothing else waits).
        var maximumQueuedBytes: Int
        /// The most descriptors received and not yet claimed by a message.
        var maximumQueuedDescriptors = 1024
    }

    /// What the handshake agreed.
    typealias Handshake = DBusAuthentication.Outcome

    private struct Frame {
        var bytes: [UInt8]
        var fileDescriptors: [DBusFileDescriptor]
    }

    private struct State {
        var socket: DBusSocket?
        var started = false
        var unixFileDescriptors = false
        var outbound: Deque<Frame> = []
        var queuedBytes = 0
        /// Bytes of the first queued frame already written (its descriptors went with the first).
        var headWritten = 0
        /// Set once the channel is to end: by close(), or by a write that failed.
        var endReason: DBusError?
        var ended = false
        var stopSignalled = false
    }

    let limits: Limits
    private let state = Mutex(State())
    private let stopPipe: (read: Int32, write: Int32)

    private static let readChunk = 64 * 1024

    init(limits: Limits) throws(DBusError) {
        self.limits = limits
        var descriptors: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0, &descriptors) == 0 else {
            throw .systemCallFailed("socketpair", errno: errno)
        }
        stopPipe = (descriptors[0], descriptors[1])
    }

    deinit {
        // The thread holds a reference while it runs; past it, only the pipe is left.
        _ = Glibc.close(stopPipe.read)
        _ = Glibc.close(stopPipe.write)
    }

    /// Connects to the first of `addresses` that accepts, authenticates, and starts the
    /// thread, which then calls `receiver`. Waits at most `timeout`; cancelling the calling
    /// task, or ``close(_:)``, stops it.
    func open(
        _ addresses: [DBusAddress], uid: UInt32, negotiateUnixFileDescriptors: Bool, timeout: Duration,
        receiver: @escaping @Sendable (Event) -> Void
    ) async throws(DBusError) -> Handshake {
        let firstStart = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard firstStart else { throw .invalidArgument("a D-Bus channel opens once") }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let result: Result<Handshake, DBusError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Handshake, DBusError>, Never>) in
                let thread = Thread { [self] in
                    run(addresses, uid: uid, negotiate: negotiateUnixFileDescriptors, deadline: deadline, opened: continuation, receiver: receiver)
                }
                thread.name = "dbus-io"
                thread.start()
            }
        } onCancel: {
            close(.cancelled)
        }
        return try result.get()
    }

    /// Queues `message` and writes what the socket takes now; the thread writes the rest.
    /// Throws when the channel has ended, when descriptors cannot be passed, or when the queue
    /// is full.
    func send(_ message: DBusEncodedMessage) throws(DBusError) {
        // The queue owns copies of the descriptors, so that the caller may close its own at once.
        var descriptors: [DBusFileDescriptor] = []
        for descriptor in message.fileDescriptors {
            guard let number = descriptor.descriptor else {
                throw .invalidArgument("a Unix file descriptor of the message was closed or taken before it was sent")
            }
            descriptors.append(try DBusFileDescriptor.duplicating(number))
        }
        try state.withLock { state throws(DBusError) in
            guard let socket = state.socket, state.endReason == nil else {
                throw state.endReason ?? .connectionClosed(reason: "the connection is not open")
            }
            if !message.fileDescriptors.isEmpty, !state.unixFileDescriptors {
                throw .unsupported("passing Unix file descriptors: the peer did not agree to it (NEGOTIATE_UNIX_FD)")
            }
            guard state.outbound.isEmpty || state.queuedBytes + message.bytes.count <= limits.maximumQueuedBytes else {
                throw .limitReached("\(state.queuedBytes) bytes are waiting to be sent to the peer, which is not reading")
            }
            state.outbound.append(Frame(bytes: message.bytes, fileDescriptors: descriptors))
            state.queuedBytes += message.bytes.count
            guard state.outbound.count == 1 else { return }
            if let failure = Self.flush(&state, socket) {
                state.endReason = failure
                wake(&state)
                throw failure
            }
            // What the socket did not take waits for the thread to see it writable.
            if !state.outbound.isEmpty { wake(&state) }
        }
    }

    /// Ends the channel with `reason` (what pending work fails with); the thread writes what it
    /// can of the queue, closes the socket and delivers `.closed(reason)`. Does not wait.
    func close(_ reason: DBusError) {
        state.withLock { state in
            if state.endReason == nil { state.endReason = reason }
            wake(&state)
        }
    }

    // MARK: - The thread

    private func run(
        _ addresses: [DBusAddress], uid: UInt32, negotiate: Bool, deadline: ContinuousClock.Instant,
        opened: CheckedContinuation<Result<Handshake, DBusError>, Never>, receiver: @Sendable (Event) -> Void
    ) {
        let socket: DBusSocket
        let handshake: Handshake
        var leftover: [UInt8]
        do throws(DBusError) {
            let address: DBusAddress
            (socket, address) = try connect(addresses, deadline: deadline)
            do throws(DBusError) {
                (handshake, leftover) = try authenticate(socket, uid: uid, negotiate: negotiate, deadline: deadline)
                if let guid = address.guid, guid != handshake.guid {
                    throw .authenticationFailed("the server's GUID \(handshake.guid) is not the one its address names, \(guid)")
                }
            } catch {
                socket.close()
                throw error
            }
        } catch {
            state.withLock { $0.ended = true }
            opened.resume(returning: .failure(state.withLock { $0.endReason } ?? error))
            return
        }
        let closedEarly = state.withLock { state -> DBusError? in
            if let reason = state.endReason { return reason }
            state.socket = socket
            state.unixFileDescriptors = handshake.unixFileDescriptors
            return nil
        }
        if let closedEarly {
            socket.close()
            state.withLock { $0.ended = true }
            opened.resume(returning: .failure(closedEarly))
            return
        }
        opened.resume(returning: .success(handshake))
        let reason = readAndWrite(socket, leftover: &leftover, receiver: receiver)
        state.withLock { state in
            // A last try at what is queued (a reply or signal sent just before close()).
            _ = Self.flush(&state, socket)
            state.socket = nil
            state.ended = true
            if state.endReason == nil { state.endReason = reason }
            state.outbound.removeAll()
            state.queuedBytes = 0
        }
        socket.close()
        receiver(.closed(reason))
    }

    private func connect(_ addresses: [DBusAddress], deadline: ContinuousClock.Instant) throws(DBusError) -> (DBusSocket, DBusAddress) {
        var failures: [DBusError] = []
        for address in addresses {
            switch address.endpoint() {
            case let .failure(error):
                failures.append(error)
            case let .success(endpoint):
                do throws(DBusError) {
                    return (try DBusSocket.connect(to: endpoint, addressText: address.description, deadline: deadline, stop: stopPipe.read), address)
                } catch {
                    if case .cancelled = error { throw error }
                    failures.append(error)
                }
            }
        }
        if failures.count == 1, let only = failures.first { throw only }
        throw .invalidAddress(addresses.map(\.description).joined(separator: ";"),
                              reason: failures.isEmpty ? "no address" : failures.map(\.description).joined(separator: "; "))
    }

    /// The SASL handshake, with blocking-style waits bounded by `deadline` and by close().
    private func authenticate(
        _ socket: DBusSocket, uid: UInt32, negotiate: Bool, deadline: ContinuousClock.Instant
    ) throws(DBusError) -> (Handshake, [UInt8]) {
        var authentication = DBusAuthentication(uid: uid, negotiateUnixFileDescriptors: negotiate)
        try writeAll(authentication.greeting, to: socket, deadline: deadline)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            guard try DBusSocket.waitUntil(socket.descriptor, POLLIN, deadline: deadline, stop: stopPipe.read) else {
                throw .authenticationFailed("the server did not finish the handshake in time")
            }
            var descriptors: [DBusFileDescriptor] = []
            let result = buffer.withUnsafeMutableBytes { socket.receive(into: $0, fileDescriptors: &descriptors) }
            let count: Int
            switch result {
            case let .success(read): count = read
            case let .failure(failure):
                if failure.code == EAGAIN || failure.code == EWOULDBLOCK { continue }
                throw .authenticationFailed("reading from the server failed: \(systemErrorMessage(failure.code))")
            }
            guard count > 0 else { throw .authenticationFailed("the server closed the connection during the handshake") }
            let step = try authentication.receive(buffer[..<count])
            try writeAll(step.send, to: socket, deadline: deadline)
            if let outcome = step.outcome { return (outcome, step.leftover) }
        }
    }

    private func writeAll(_ bytes: [UInt8], to socket: DBusSocket, deadline: ContinuousClock.Instant) throws(DBusError) {
        var offset = 0
        while offset < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                socket.send(UnsafeRawBufferPointer(rebasing: raw[offset...]), fileDescriptors: [])
            }
            switch result {
            case let .success(sent): offset += sent
            case let .failure(failure):
                guard failure.code == EAGAIN || failure.code == EWOULDBLOCK else {
                    throw .authenticationFailed("writing to the server failed: \(systemErrorMessage(failure.code))")
                }
                guard try DBusSocket.waitUntil(socket.descriptor, POLLOUT, deadline: deadline, stop: stopPipe.read) else {
                    throw .authenticationFailed("the server did not read the handshake in time")
                }
            }
        }
    }

    /// Reads, cuts and delivers messages, and writes the queue when the socket takes it, until
    /// the channel ends; returns why.
    private func readAndWrite(_ socket: DBusSocket, leftover: inout [UInt8], receiver: @Sendable (Event) -> Void) -> DBusError {
        var input = DBusMessageStream(limits: limits)
        if !leftover.isEmpty {
            do throws(DBusError) {
                try input.append(leftover[...], fileDescriptors: [], deliver: { receiver(.message($0)) })
            } catch {
                return error
            }
        }
        var chunk = [UInt8](repeating: 0, count: Self.readChunk)
        while true {
            let wantsWrite = state.withLock { !$0.outbound.isEmpty }
            var descriptors = [
                pollfd(fd: socket.descriptor, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&descriptors, 2, -1) < 0 {
                if errno == EINTR { continue }
                return .connectionClosed(reason: "poll failed: \(systemErrorMessage(errno))")
            }
            if descriptors[1].revents != 0 {
                let reason = state.withLock { state -> DBusError? in
                    drainStopPipe()
                    state.stopSignalled = false
                    return state.endReason
                }
                if let reason { return reason }
            }
            if descriptors[0].revents & Int16(POLLOUT) != 0 || (wantsWrite && descriptors[0].revents & Int16(POLLERR | POLLHUP) != 0) {
                if let failure = state.withLock({ Self.flush(&$0, socket) }) { return failure }
            }
            if descriptors[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                var received: [DBusFileDescriptor] = []
                let result = chunk.withUnsafeMutableBytes { socket.receive(into: $0, fileDescriptors: &received) }
                switch result {
                case let .success(count):
                    if count == 0 { return .connectionClosed(reason: "the peer closed the connection") }
                    do throws(DBusError) {
                        try input.append(chunk[..<count], fileDescriptors: received, deliver: { receiver(.message($0)) })
                    } catch {
                        return error
                    }
                case let .failure(failure):
                    if failure.code == EAGAIN || failure.code == EWOULDBLOCK { continue }
                    if failure.code == EMSGSIZE {
                        return .protocolViolation(.tooManyFileDescriptors(DBusSocket.maximumDescriptorsPerRead + 1,
                                                                          limit: DBusSocket.maximumDescriptorsPerRead))
                    }
                    return .connectionClosed(reason: "reading failed: \(systemErrorMessage(failure.code))")
                }
            }
        }
    }

    /// Writes queued frames until the socket stops taking them. Returns why the channel must
    /// end, if a write failed. Called with the state lock held.
    private static func flush(_ state: inout State, _ socket: DBusSocket) -> DBusError? {
        while let head = state.outbound.first {
            // The frame's own copies (see send): open until the frame is written.
            let descriptors = state.headWritten == 0 ? head.fileDescriptors.compactMap(\.descriptor) : []
            let written = state.headWritten
            let result = head.bytes.withUnsafeBytes { raw in
                socket.send(UnsafeRawBufferPointer(rebasing: raw[written...]), fileDescriptors: descriptors)
            }
            switch result {
            case let .success(count):
                state.headWritten += count
                if state.headWritten == head.bytes.count {
                    state.outbound.removeFirst()
                    state.queuedBytes -= head.bytes.count
                    state.headWritten = 0
                }
            case let .failure(failure):
                if failure.code == EAGAIN || failure.code == EWOULDBLOCK { return nil }
                return .connectionClosed(reason: "writing to the peer failed: \(systemErrorMessage(failure.code))")
            }
        }
        return nil
    }

    /// Wakes the thread, to end (``State/endReason`` is set) or to look at the queue. Called
    /// with the state lock held.
    private func wake(_ state: inout State) {
        guard !state.stopSignalled, !state.ended else { return }
        state.stopSignalled = true
        var byte: UInt8 = 1
        _ = Glibc.send(stopPipe.write, &byte, 1, Int32(MSG_NOSIGNAL))
    }

    private func drainStopPipe() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ Glibc.recv(stopPipe.read, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
    }
}

/// The receive side's framing: bytes and descriptors in, whole messages out, with every
/// length checked before it is buffered. No I/O.
struct DBusMessageStream {
    let limits: DBusChannel.Limits
    private var buffer: [UInt8] = []
    private var start = 0
    private var descriptors: Deque<DBusFileDescriptor> = []

    init(limits: DBusChannel.Limits) {
        self.limits = limits
    }

    /// The bytes the buffer has room for (tests: announced lengths are not allocated ahead).
    var bufferedCapacity: Int { buffer.capacity }

    /// Adds what was read and delivers each message it completes, in order.
    mutating func append(
        _ bytes: ArraySlice<UInt8>, fileDescriptors: [DBusFileDescriptor], deliver: (DBusMessage) -> Void
    ) throws(DBusError) {
        descriptors.append(contentsOf: fileDescriptors)
        guard descriptors.count <= limits.maximumQueuedDescriptors else {
            throw .protocolViolation(.tooManyFileDescriptors(descriptors.count, limit: limits.maximumQueuedDescriptors))
        }
        buffer.append(contentsOf: bytes)
        while true {
            let available = buffer[start...]
            let length: Int
            do throws(DBusWireError) {
                guard let framed = try DBusMessage.framedLength(available, limit: limits.maximumMessageLength) else { break }
                length = framed
            } catch {
                throw .protocolViolation(error)
            }
            // Not complete yet. The buffer grows as bytes come (geometrically, so a large message
            // costs few copies), never ahead of them: a 16-byte header must not buy 128 MiB.
            guard available.count >= length else { break }
            let decoded: (message: DBusMessage, fileDescriptorCount: Int)
            do throws(DBusWireError) {
                decoded = try DBusMessage.decode(available.prefix(length), availableFileDescriptors: ArraySlice(descriptors),
                                                 maximumLength: limits.maximumMessageLength)
            } catch {
                throw .protocolViolation(error)
            }
            descriptors.removeFirst(decoded.fileDescriptorCount)
            start += length
            deliver(decoded.message)
        }
        if start == buffer.count {
            // Keep a modest buffer; let a large message's memory go.
            if buffer.capacity > 1 << 20 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            start = 0
        } else if start > 64 * 1024 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
#endif
