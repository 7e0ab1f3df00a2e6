#if canImport(Glibc)
import BluetoothCore
import Dispatch
import Foundation
import Glibc
import Synchronization

/// An ``HCITransport`` over an open file descriptor: a stream socket, a serial port or the
/// Linux HCI socket. The openers (``SystemTransports``, or ``TCPTransport``,
/// ``UnixSocketTransport``, ``SerialTransport`` and ``HCIUserChannelTransport`` directly)
/// create it; it can also wrap any descriptor, such as one end of a `socketpair` in a test.
///
/// A dedicated reader thread waits with `poll()` on the descriptor and on a self-pipe, so
/// ``close()`` can wake it; it cuts what it reads into packets and calls the receiver, in
/// order, then ends with exactly one `.closed`. Writes never raise `SIGPIPE` (sockets are
/// written with `MSG_NOSIGNAL`; a tty reports a hang-up as `EIO` instead).
///
/// A write waits for buffer space (a slow reader, UART flow control), but not for ever: when
/// the descriptor takes no byte for ``writeStallLimit``, the controller is taken for stuck and
/// the transport ends with ``TransportError/connectionLost(_:reason:)``.
///
/// Call ``close()`` when done: while the reader thread runs it keeps the transport alive.
public final class FileDescriptorTransport: HCITransport {
    /// How the bytes read from the descriptor map to packets.
    public enum Framing: Sendable, Equatable {
        /// A byte stream (TCP, Unix socket, UART): packets are cut with ``H4Deframer``
        /// however the reads happen to split them.
        case stream
        /// One whole framed packet per read and per write (the Linux HCI socket).
        case datagram
    }

    /// The specification the transport was opened from, e.g. `tcp:127.0.0.1:9000`.
    public let name: String
    /// Whether reads and writes are a byte stream or one packet each.
    public let framing: Framing
    /// How long a write may make no progress before the transport gives up.
    public let writeStallLimit: Duration
    private let descriptor: Int32
    private let isSocket: Bool
    /// A TCP socket acknowledges every read at once (see ``readBatch(into:deframer:)``).
    private let isTCP: Bool
    /// The self-pipe: one byte is written when the transport stops and never read back, so
    /// it stays readable and wakes the reader and any writer waiting for buffer space.
    private let stopPipe: (read: Int32, write: Int32)
    private let state = Mutex(State())
    /// Held for the whole of a write, so packets are never interleaved and keep their order;
    /// the descriptor is closed only while holding it, so no write can hit a reused number.
    private let writeLock = Mutex(())
    private let reader = DispatchGroup()

    /// The largest framed HCI packet: indicator, 4-octet ACL header, 65535 octets of data.
    /// A datagram read into a smaller buffer would be truncated.
    private static let largestPacket = 1 + 4 + 0xFFFF
    /// The most datagrams one wake-up reads into a batch.
    private static let datagramsPerBatch = 64

    private static let readerThreadName = "bluejay-hci-rx"

    private struct State {
        var started = false
        var closeRequested = false
        var stopSignalled = false
        var descriptorsOpen = true
        var readerThread: pthread_t?
        /// Why the transport ended on its own (`nil` while open or after a local close).
        var endReason: TransportError?
        /// A write that stalled past the limit ended the transport.
        var writeStall: TransportError?
    }

    /// Wraps `fileDescriptor`, which the transport owns from now on: it is made non-blocking
    /// and closed when the transport ends, also when this initializer throws.
    /// - Parameters:
    ///   - fileDescriptor: an open socket, serial port or pipe end.
    ///   - framing: whether reads return a byte stream to deframe or one packet each.
    ///   - writeStallLimit: how long a write may make no progress before the transport ends.
    ///   - name: the specification it was opened from, used in logs and errors.
    public init(name: String, fileDescriptor: Int32, framing: Framing, writeStallLimit: Duration = .seconds(10)) throws(TransportError) {
        self.name = name
        self.framing = framing
        self.writeStallLimit = writeStallLimit
        self.descriptor = fileDescriptor
        self.isSocket = SystemCalls.isSocket(fileDescriptor)
        self.isTCP = isSocket && SystemCalls.isTCPSocket(fileDescriptor)
        do throws(SystemCallError) {
            try SystemCalls.setNonBlocking(fileDescriptor)
            stopPipe = try SystemCalls.makePipe()
        } catch {
            SystemCalls.closeDescriptor(fileDescriptor)
            throw .openFailed(name, errno: error.code, hint: "Cannot prepare the descriptor (too many open files?)")
        }
    }

    deinit {
        // Only reached when the reader never ran (it holds a reference while it runs).
        state.withLock { state in
            guard state.descriptorsOpen else { return }
            releaseDescriptors(&state)
        }
    }

    /// Starts the reader thread, which calls `receiver` with each packet in order and then
    /// once with `.closed`. Only the first call has an effect.
    public func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        let isFirstStart = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard isFirstStart else { return }
        reader.enter()
        Thread { [self] in
            // Best effort, for debuggers and `top -H`: corelibs Foundation may ignore a name set
            // before start(), and Linux limits thread names to 15 bytes (pthread_setname_np(3)).
            Thread.current.name = Self.readerThreadName
            runReader(receiver)
            reader.leave()
        }.start()
    }

    /// Writes the framed packet completely before returning, waiting for buffer space if
    /// needed; concurrent calls are serialised in call order. Throws ``TransportError/writeFailed(_:errno:)``,
    /// or ``TransportError/closed(_:)`` (or the reason it ended) once the transport has stopped.
    public func send(_ packet: H4Packet) throws(TransportError) {
        let bytes = packet.framed
        try writeLock.withLock { _ throws(TransportError) in
            try state.withLock { state throws(TransportError) in
                guard state.descriptorsOpen, !state.stopSignalled else { throw state.endReason ?? state.writeStall ?? .closed(name) }
            }
            try writeAll(bytes)
        }
    }

    /// Stops the transport. While the reader thread runs, this wakes it and waits until it
    /// has delivered its last event, `.closed(nil)` unless the transport had already ended,
    /// so do not call it while holding a lock that the receiver takes. Called from the
    /// receiver itself, it returns at once and `.closed(nil)` follows the current event.
    public func close() {
        let (started, onReaderThread) = state.withLock { state in
            state.closeRequested = true
            signalStop(&state)
            let onReaderThread = state.readerThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return (state.started, onReaderThread)
        }
        if started {
            if !onReaderThread { reader.wait() }
        } else {
            writeLock.withLock { _ in
                state.withLock { state in releaseDescriptors(&state) }
            }
        }
    }

    // MARK: - Reader thread

    private func runReader(_ receiver: @Sendable (TransportEvent) -> Void) {
        let reason = readUntilEnd(receiver)
        // Wake a writer waiting for buffer space before taking the write lock.
        let finalReason = state.withLock { state in
            signalStop(&state)
            return state.closeRequested ? nil : reason ?? state.writeStall
        }
        writeLock.withLock { _ in
            state.withLock { state in
                state.endReason = finalReason
                releaseDescriptors(&state)
            }
        }
        receiver(.closed(finalReason))
    }

    /// Reads and delivers packets until the transport stops; returns why (`nil`: close()).
    private func readUntilEnd(_ receiver: @Sendable (TransportEvent) -> Void) -> TransportError? {
        let mayRun = state.withLock { state in
            state.readerThread = pthread_self()
            return state.descriptorsOpen && !state.closeRequested
        }
        guard mayRun else { return nil }
        var deframer = H4Deframer()
        // A stream read takes whatever has arrived; datagrams are read one after another into
        // the same buffer, each with room for the largest packet.
        let bufferSize = framing == .stream ? Self.largestPacket : 2 * Self.largestPacket
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while true {
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            do throws(SystemCallError) {
                _ = try SystemCalls.poll(&descriptors, timeout: nil)
            } catch {
                return .connectionLost(name, reason: "poll failed: \(SystemError.message(error.code))")
            }
            if descriptors[1].revents != 0 { return nil }
            if descriptors[0].revents & Int16(POLLNVAL) != 0 {
                return .connectionLost(name, reason: "the descriptor is no longer valid")
            }
            guard descriptors[0].revents != 0 else { continue }

            let (packets, end) = readBatch(into: &buffer, deframer: &deframer)
            if !packets.isEmpty {
                // After close() the receiver hears nothing but `.closed(nil)`.
                if state.withLock({ $0.closeRequested }) { return nil }
                // One batch per wake-up: the receiver hands the app one delivery for all of it.
                receiver(.packets(packets))
            }
            if let end { return end }
        }
    }

    /// Reads what has arrived: one read of a stream, or every queued datagram (up to
    /// ``datagramsPerBatch``, as long as the buffer has room for the largest packet). Returns
    /// the packets and, if the transport ended, why (after the packets before it).
    ///
    /// On TCP each read is acknowledged at once. A controller that leaves Nagle's algorithm on
    /// and writes a packet in two pieces (Rootcanal, the Android emulator's controller) holds
    /// the second piece until the first is acknowledged, and Linux delays that ACK by 40 ms or
    /// more: every HCI event would wait that long.
    private func readBatch(into buffer: inout [UInt8], deframer: inout H4Deframer) -> (packets: [H4Packet], end: TransportError?) {
        var packets: [H4Packet] = []
        var offset = 0
        while true {
            let (count, code) = buffer.withUnsafeMutableBytes { raw in
                let count = read(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                return (count, errno)
            }
            if count == 0 {
                let dropped = deframer.bufferedByteCount
                // A socket's peer closed it; a tty (a UART) reads end of file on a hang-up.
                return (packets, .connectionLost(
                    name,
                    reason: (isSocket ? "the other end closed the connection" : "the device hung up (unplugged, or closed at its other end)")
                        + (dropped > 0 ? " in the middle of a packet (\(dropped) byte(s) dropped)" : "")
                ))
            }
            if count < 0 {
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return (packets, nil) }
                return (packets, .connectionLost(name, reason: SystemError.message(code)))
            }
            if isTCP { SystemCalls.acknowledgeAtOnce(descriptor) }
            let (decoded, framingError) = decode(buffer[offset..<(offset + count)], with: &deframer)
            packets += decoded
            if let framingError { return (packets, .framing(name, framingError)) }
            offset += count
            guard framing == .datagram, packets.count < Self.datagramsPerBatch, buffer.count - offset >= Self.largestPacket else {
                return (packets, nil)
            }
        }
    }

    /// The packets `bytes` completes and, if they break the framing, the error. The packets
    /// before a bad indicator are still returned, so the controller's last good packets reach
    /// the receiver before the transport closes.
    private func decode(_ bytes: ArraySlice<UInt8>, with deframer: inout H4Deframer) -> ([H4Packet], PacketDecodingError?) {
        switch framing {
        case .datagram:
            do throws(PacketDecodingError) {
                return ([try H4Packet(framed: bytes)], nil)
            } catch {
                return ([], error)
            }
        case .stream:
            let before = deframer
            do throws(PacketDecodingError) {
                return (try deframer.append(bytes), nil)
            } catch {
                // Rare path: replay the chunk a byte at a time to find where it went wrong.
                var replay = before
                var packets: [H4Packet] = []
                for byte in bytes {
                    do throws(PacketDecodingError) {
                        packets += try replay.append(CollectionOfOne(byte))
                    } catch {
                        break
                    }
                }
                return (packets, error)
            }
        }
    }

    // MARK: - Writing (called with the write lock held)

    private func writeAll(_ bytes: [UInt8]) throws(TransportError) {
        var offset = 0
        while offset < bytes.count {
            let (written, code) = bytes.withUnsafeBytes { raw -> (Int, Int32) in
                guard let base = raw.baseAddress else { return (0, EINVAL) }
                let start = base + offset
                let length = raw.count - offset
                // send(2) MSG_NOSIGNAL: a peer that went away yields EPIPE, not SIGPIPE.
                let written = isSocket
                    ? Glibc.send(descriptor, start, length, Int32(MSG_NOSIGNAL))
                    : Glibc.write(descriptor, start, length)
                return (written, errno)
            }
            if written > 0 {
                // A datagram socket takes a packet whole or not at all.
                if framing == .datagram, written != bytes.count { throw .writeFailed(name, errno: EMSGSIZE) }
                offset += written
                continue
            }
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try waitUntilWritable()
            default: throw .writeFailed(name, errno: written == 0 ? EIO : code)
            }
        }
    }

    /// Waits for buffer space (a slow reader, or RTS/CTS flow control holding a UART back),
    /// until the transport stops, or for at most ``writeStallLimit``: then the transport ends.
    private func waitUntilWritable() throws(TransportError) {
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0),
            pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
        ]
        let ready: Int32
        do throws(SystemCallError) {
            ready = try SystemCalls.poll(&descriptors, timeout: writeStallLimit)
        } catch {
            throw .writeFailed(name, errno: error.code)
        }
        if descriptors[1].revents != 0 {
            throw state.withLock { $0.endReason ?? $0.writeStall } ?? .closed(name)
        }
        if ready == 0 {
            let stall = TransportError.connectionLost(name, reason: "the controller took no data for \(writeStallLimit)")
            state.withLock { state in
                if state.writeStall == nil { state.writeStall = stall }
                signalStop(&state)
            }
            throw stall
        }
        // Writable, or an error/hang-up condition that the next write reports.
    }

    // MARK: - State helpers (called with the state lock held)

    private func signalStop(_ state: inout State) {
        guard !state.stopSignalled, state.descriptorsOpen else { return }
        state.stopSignalled = true
        var byte: UInt8 = 1
        _ = Glibc.send(stopPipe.write, &byte, 1, Int32(MSG_NOSIGNAL))
    }

    /// Also requires the write lock, unless no other reference can exist (deinit).
    private func releaseDescriptors(_ state: inout State) {
        guard state.descriptorsOpen else { return }
        state.descriptorsOpen = false
        SystemCalls.closeDescriptor(descriptor)
        SystemCalls.closeDescriptor(stopPipe.read)
        SystemCalls.closeDescriptor(stopPipe.write)
    }
}
#endif
