#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Logging
import Synchronization

/// Writes every HCI packet a transport carries, both ways, to a btsnoop file that Wireshark,
/// `tshark` and Android's tools open (``BTSnoop``, datalink H4).
///
/// Watching must not slow what is watched: a packet is only queued (its bytes are the
/// transport's own slice, not a copy) with a timestamp; a thread of the capture's own encodes
/// and writes the queue a batch at a time, waking every few milliseconds while packets flow
/// (producers do not wake it then). The queue is bounded (``queueLimit`` packets,
/// ``queueByteLimit`` bytes): when the writer falls behind, packets are dropped and counted,
/// the count goes into every later record (btsnoop's cumulative drops) and into the line
/// logged at ``close()``.
///
/// ``flush()`` waits until what was queued is written; ``close()`` flushes and closes the
/// file. Captures still open when the process calls `exit` are flushed then; a program that
/// ends on a signal should close them first (the `bluejay` CLI does on SIGINT and SIGTERM).
///
/// A capture records what pairing and encryption carry: the file is created `0600` (an
/// existing one appended to or replaced is made `0600`), and never through a symbolic link, a
/// second hard link or anything but a regular file of this user. Its keys (LTKs, IRKs, CSRKs,
/// DHKeys, the pairing's confirm, random and DHKey check values, OOB data) are blanked, octet
/// for octet, unless ``KeyMaterial/kept`` asks for them (Wireshark decrypts a link with its
/// LTK); see `CaptureRedactor` for the list. Even blanked, a capture shows every value read or
/// written over the air, encrypted links included: keep it private.
///
/// ```swift
/// let capture = try HCICapture(path: "session.btsnoop")
/// var configuration = HostConfiguration()
/// configuration.capture = capture
/// let host = LEHost(transport: transport, configuration: configuration)
/// // ... `tshark -r session.btsnoop`
/// ```
public final class HCICapture: Sendable, CustomStringConvertible {
    /// What to do when the file exists already.
    public enum FileMode: Sendable, Equatable {
        /// Refuse it (``CaptureError/fileExists(_:)``): a capture is never lost by accident.
        case createNew
        /// Add records to it (it must be a btsnoop H4 file, or empty).
        case append
        /// Replace it.
        case replace
    }

    /// Whether the keys the traffic carries are written to the file.
    public enum KeyMaterial: Sendable, Equatable {
        /// Every octet of a key is written as 0x00 (lengths and other fields stay, so
        /// Wireshark decodes the file). The default.
        case blanked
        /// Keys are written as they went, for Wireshark to decrypt the links: the file then
        /// gives whoever reads it the bonds' keys.
        case kept
    }

    /// What the capture has done so far.
    public struct Statistics: Sendable, Equatable, CustomStringConvertible {
        /// Packets written to the file.
        public var written: Int
        /// Packets dropped because the writer fell behind (or the file could not be written).
        public var dropped: Int
        /// Bytes written to the file, its header included.
        public var bytes: Int

        public var description: String {
            "\(written) packets (\(bytes) bytes) written, \(dropped) dropped"
        }
    }

    /// The file written.
    public let path: String
    /// Whether its keys are blanked.
    public let keys: KeyMaterial
    /// The most packets waiting for the writer at once.
    public var queueLimit: Int { core.queueLimit }
    /// The most packet bytes waiting for the writer at once.
    public var queueByteLimit: Int { core.queueByteLimit }

    private let core: Core

    /// Opens (or creates) `path` and starts the writer.
    /// - Parameters:
    ///   - path: the file to write (`0600`; a symbolic link there is refused).
    ///   - logger: where the closing statistics and write failures are logged.
    ///   - mode: what to do when the file exists (refuse it by default).
    ///   - keys: whether keys are blanked (the default) or kept for Wireshark's decryption.
    ///   - queueLimit: the most packets waiting for the writer; past it they are dropped and counted.
    ///   - queueByteLimit: the most packet bytes waiting for the writer.
    public convenience init(path: String, mode: FileMode = .createNew, keys: KeyMaterial = .blanked, queueLimit: Int = 65_536,
                            queueByteLimit: Int = 32 << 20, logger: Logger = Logger(label: "bluejay.capture")) throws(CaptureError) {
        try self.init(path: path, mode: mode, keys: keys, queueLimit: queueLimit, queueByteLimit: queueByteLimit, logger: logger,
                      clock: HCICapture.wallClockTimestamp, startsWriter: true)
    }

    /// `clock` gives btsnoop timestamps; `startsWriter: false` leaves the queue unwritten
    /// until ``flush()`` or ``close()`` (tests of the bound).
    init(path: String, mode: FileMode, keys: KeyMaterial = .blanked, queueLimit: Int, queueByteLimit: Int, logger: Logger,
         clock: @escaping @Sendable () -> Int64, startsWriter: Bool) throws(CaptureError) {
        self.path = path
        self.keys = keys
        let descriptor = try Self.openFile(path: path, mode: mode)
        core = Core(path: path, descriptor: descriptor.descriptor, headerBytes: descriptor.headerBytes,
                    queue: CaptureQueue(packetLimit: queueLimit, byteLimit: queueByteLimit),
                    redactor: keys == .blanked ? CaptureRedactor() : nil, clock: clock, logger: logger)
        if startsWriter { core.startWriter() }
        CaptureRegistry.add(core)
    }

    deinit {
        core.close()
    }

    public var description: String { "capture \(path)" }

    /// Queues a packet the host sends to the controller.
    public func record(sent packet: H4Packet) {
        core.enqueue(CollectionOfOne(packet), received: false)
    }

    /// Queues packets the host received from the controller (one transport read).
    public func record(received packets: [H4Packet]) {
        core.enqueue(packets, received: true)
    }

    /// Waits until every packet queued so far is in the file.
    public func flush() {
        core.flush(timeout: nil)
    }

    /// Flushes, closes the file and logs what was written and dropped. Idempotent; packets
    /// recorded afterwards are ignored.
    public func close() {
        core.close()
    }

    /// Packets written and dropped so far.
    public var statistics: Statistics { core.statistics }

    /// Whether ``close()`` has run.
    public var isClosed: Bool { core.isClosed }

    /// Flushes every capture still open (at most `timeout` each): for a program about to
    /// exit. Registered with `atexit` when the first capture opens.
    public static func flushAll(timeout: Duration = .seconds(2)) {
        CaptureRegistry.flushAll(timeout: timeout)
    }

    /// Now, as a btsnoop timestamp (microseconds since year 0), from the real-time clock.
    static let wallClockTimestamp: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return BTSnoop.timestamp(unixMicroseconds: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)
    }

    // MARK: Opening

    /// Opens the file `0600` without following a symbolic link (`O_NOFOLLOW`; with `O_EXCL` a
    /// link is an existing file) or blocking on a FIFO (`O_NONBLOCK`), and checks what it
    /// opened before changing it: a regular file of this user with one name. Replacing
    /// truncates only then (`O_TRUNC` at open would truncate whatever was there first).
    private static func openFile(path: String, mode: FileMode) throws(CaptureError) -> (descriptor: Int32, headerBytes: Int) {
        let flags: Int32
        switch mode {
        case .createNew: flags = O_WRONLY | O_CREAT | O_EXCL
        case .append: flags = O_RDWR | O_CREAT | O_APPEND
        case .replace: flags = O_WRONLY | O_CREAT
        }
        let descriptor = posixOpen(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw .fileExists(path) }
            if code == ELOOP { throw .unsafeFile(path, reason: "it is a symbolic link, which a capture never follows") }
            if code == ENXIO { throw .unsafeFile(path, reason: "it is not a regular file") }
            throw .systemError(path, errno: code)
        }
        do throws(CaptureError) {
            try checkPrivate(descriptor: descriptor, path: path)
            if mode == .replace, ftruncate(descriptor, 0) != 0 { throw .systemError(path, errno: errno) }
            if mode == .append, try hasHeader(descriptor: descriptor, path: path) { return (descriptor, 0) }
            let header = BTSnoop.FileHeader().encode()
            try writeAll(header[...], to: descriptor, path: path)
            return (descriptor, header.count)
        } catch {
            _ = posixClose(descriptor)
            throw error
        }
    }

    /// Refuses what is not a regular file of this user with a single name (a hard link would
    /// let the capture write into a file that has another name, perhaps another owner's), and
    /// makes it `0600`: it holds what pairing carried.
    private static func checkPrivate(descriptor: Int32, path: String) throws(CaptureError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .systemError(path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .unsafeFile(path, reason: "it is not a regular file") }
        guard status.st_uid == geteuid() else { throw .unsafeFile(path, reason: "it belongs to user \(status.st_uid)") }
        guard status.st_nlink == 1 else { throw .unsafeFile(path, reason: "it has \(status.st_nlink) names (hard links)") }
        // The umask may only remove bits: this makes the mode exactly 0600 whatever it is.
        if status.st_mode & 0o777 != 0o600, fchmod(descriptor, 0o600) != 0 { throw .systemError(path, errno: errno) }
        // Writes block as usual from here on (O_NONBLOCK was only for the open).
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// Whether a file opened for appending starts with a btsnoop H4 header (`false`: it is
    /// empty); throws when it holds something else.
    private static func hasHeader(descriptor: Int32, path: String) throws(CaptureError) -> Bool {
        var header = [UInt8](repeating: 0, count: BTSnoop.fileHeaderSize)
        let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw .systemError(path, errno: errno) }
        if count == 0 { return false }
        let decoded: BTSnoop.FileHeader
        do {
            decoded = try BTSnoop.FileHeader.decode(header[..<count])
        } catch {
            throw .notACapture(path, reason: "it is not a btsnoop file")
        }
        guard decoded.datalink == BTSnoop.datalinkH4 else {
            throw .notACapture(path, reason: "its datalink is \(decoded.datalink), not HCI UART (H4, \(BTSnoop.datalinkH4))")
        }
        return true
    }

    static func writeAll(_ bytes: ArraySlice<UInt8>, to descriptor: Int32, path: String) throws(CaptureError) {
        var rest = bytes
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { posixWrite(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .systemError(path, errno: errno)
            }
            rest = rest.dropFirst(written)
        }
    }

    // MARK: The writer

    /// The state the writer thread shares with the producers; the thread holds it, not the
    /// ``HCICapture``, so that an abandoned capture is still closed by its `deinit`.
    final class Core: Sendable {
        private struct State: Sendable {
            var queue: CaptureQueue
            var descriptor: Int32?
            var written = 0
            var bytes: Int
            /// Packets lost because the file could not be written.
            var lost = 0
            var failure: CaptureError?
            /// The writer waits with no timeout: the next packet must wake it.
            var writerIdle = false
            var isClosing = false
            var writerRunning = false
            /// Flushes waiting for `written + dropped-at-write` to reach their mark.
            var flushWaiters: [(mark: Int, signal: DispatchSemaphore)] = []
            /// Packets handled by the writer (written or lost), for the flush marks.
            var handled = 0
        }

        let path: String
        let queueLimit: Int
        let queueByteLimit: Int
        private let state: Mutex<State>
        /// Blanks keys as the records are encoded (`nil`: keys kept). Used by whoever writes,
        /// one batch at a time, in queue order.
        private let redactor: Mutex<CaptureRedactor?>
        private let wake = DispatchSemaphore(value: 0)
        private let writerDone = DispatchSemaphore(value: 0)
        private let clock: @Sendable () -> Int64
        private let logger: Logger
        /// How long the writer lets packets gather while they flow.
        static let gatheringInterval: DispatchTimeInterval = .milliseconds(5)

        init(path: String, descriptor: Int32, headerBytes: Int, queue: CaptureQueue, redactor: CaptureRedactor?,
             clock: @escaping @Sendable () -> Int64, logger: Logger) {
            self.path = path
            queueLimit = queue.packetLimit
            queueByteLimit = queue.byteLimit
            state = Mutex(State(queue: queue, descriptor: descriptor, bytes: headerBytes))
            self.redactor = Mutex(redactor)
            self.clock = clock
            self.logger = logger
        }

        func startWriter() {
            state.withLock { $0.writerRunning = true }
            let thread = Thread { [self] in
                writerLoop()
                writerDone.signal()
            }
            thread.name = "bluejay-capture"
            thread.start()
        }

        func enqueue(_ packets: some Collection<H4Packet>, received: Bool) {
            guard !packets.isEmpty else { return }
            let timestamp = clock()
            let wakesWriter = state.withLock { state -> Bool in
                guard !state.isClosing, state.descriptor != nil else { return false }
                for packet in packets { state.queue.append(packet, received: received, timestamp: timestamp) }
                guard state.writerIdle else { return false }
                state.writerIdle = false
                return true
            }
            if wakesWriter { wake.signal() }
        }

        var statistics: Statistics {
            state.withLock { Statistics(written: $0.written, dropped: $0.queue.dropped + $0.lost, bytes: $0.bytes) }
        }

        var isClosed: Bool { state.withLock { $0.isClosing } }

        /// Waits until what is queued now has been handled; with no writer thread, writes it here.
        func flush(timeout: Duration?) {
            let waiter = state.withLock { state -> DispatchSemaphore? in
                guard state.writerRunning, !state.queue.isEmpty || state.handled < state.queue.accepted else { return nil }
                let signal = DispatchSemaphore(value: 0)
                state.flushWaiters.append((state.queue.accepted, signal))
                state.writerIdle = false
                return signal
            }
            guard let waiter else {
                if !state.withLock({ $0.writerRunning }) { writeQueued() }
                return
            }
            wake.signal()
            if let timeout {
                let (seconds, attoseconds) = timeout.components
                _ = waiter.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
            } else {
                waiter.wait()
            }
        }

        /// Flushes, stops the writer and closes the file; logs the statistics once.
        func close(timeout: Duration? = nil) {
            let first = state.withLock { state -> Bool in
                defer { state.isClosing = true }
                return !state.isClosing
            }
            guard first else { return }
            CaptureRegistry.remove(self)
            let running = state.withLock { $0.writerRunning }
            if running {
                wake.signal()
                writerDone.wait()
            } else {
                writeQueued()
            }
            let (descriptor, failure) = state.withLock { state -> (Int32?, CaptureError?) in
                defer { state.descriptor = nil }
                return (state.descriptor, state.failure)
            }
            if let descriptor { _ = posixClose(descriptor) }
            let statistics = self.statistics
            if statistics.dropped > 0 || failure != nil {
                let why = failure.map { ": \($0)" } ?? " (the writer fell behind)"
                logger.warning("capture \(path): \(statistics)\(why)")
            } else {
                logger.info("capture \(path): \(statistics)")
            }
        }

        private func writerLoop() {
            while true {
                let (wrote, closing) = writeQueued()
                if closing { return }
                if wrote {
                    // Packets are flowing: let them gather without being woken per packet.
                    _ = wake.wait(timeout: .now() + Self.gatheringInterval)
                } else {
                    let idle = state.withLock { state -> Bool in
                        guard state.queue.isEmpty, !state.isClosing, state.flushWaiters.isEmpty else { return false }
                        state.writerIdle = true
                        return true
                    }
                    if idle { wake.wait() }
                }
            }
        }

        /// Writes what is queued. Returns whether there was anything, and whether the capture
        /// is closing with nothing left.
        @discardableResult
        private func writeQueued() -> (wrote: Bool, closing: Bool) {
            let (entries, descriptor, closing) = state.withLock { state in
                (state.queue.takeAll(), state.failure == nil ? state.descriptor : nil, state.isClosing)
            }
            var failure: CaptureError?
            let bytes = entries.isEmpty ? [] : redactor.withLock { CaptureQueue.encode(entries, redactor: &$0) }
            if let descriptor, !bytes.isEmpty {
                do throws(CaptureError) {
                    try HCICapture.writeAll(bytes[...], to: descriptor, path: path)
                } catch {
                    failure = error
                }
            }
            let waiters = state.withLock { state -> [DispatchSemaphore] in
                state.handled += entries.count
                if descriptor != nil, failure == nil {
                    state.written += entries.count
                    state.bytes += bytes.count
                } else {
                    state.lost += entries.count
                }
                if let failure, state.failure == nil {
                    state.failure = failure
                    logger.error("\(failure); the capture stops here")
                }
                let handled = state.handled
                let done = state.flushWaiters.filter { $0.mark <= handled }.map(\.signal)
                state.flushWaiters.removeAll { $0.mark <= handled }
                return done
            }
            waiters.forEach { $0.signal() }
            return (!entries.isEmpty, closing && entries.isEmpty)
        }
    }
}

/// The captures open in this process, flushed when it exits.
enum CaptureRegistry {
    private struct Entry: Sendable {
        weak var core: HCICapture.Core?
    }

    private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    private static let atExitRegistration = Mutex(false)

    static func add(_ core: HCICapture.Core) {
        entries.withLock { $0[ObjectIdentifier(core)] = Entry(core: core) }
        let registers = atExitRegistration.withLock { registered -> Bool in
            defer { registered = true }
            return !registered
        }
        if registers { atexit { CaptureRegistry.flushAll(timeout: .seconds(2)) } }
    }

    static func remove(_ core: HCICapture.Core) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(core)) }
    }

    static func flushAll(timeout: Duration) {
        let cores = entries.withLock { $0.values.compactMap(\.core) }
        for core in cores { core.flush(timeout: timeout) }
    }
}

// The system calls by module, since the capture's own `close()` hides the C one.
private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    Glibc.open(path, flags, mode)
    #else
    Darwin.open(path, flags, mode)
    #endif
}

private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, buffer, count)
    #else
    Darwin.write(descriptor, buffer, count)
    #endif
}

@discardableResult
private func posixClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}
