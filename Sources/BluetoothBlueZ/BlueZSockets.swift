#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// The socket of `AcquireNotify` (doc/gatt-api.txt): a SOCK_SEQPACKET whose every datagram is
/// one notified value, read as it arrives, without a D-Bus message per value. Every datagram
/// waiting is read per wake-up and handed over as one batch.
final class BlueZNotifySocket: @unchecked Sendable {
    // @unchecked: DispatchSource is thread-safe (resume, cancel from any thread); the rest is let or atomic.
    private let descriptor: Int32
    let mtu: Int
    private let source: DispatchSourceRead
    private let isClosed = Atomic(false)
    private let deliver: @Sendable ([[UInt8]]) -> Void
    private let closed: @Sendable () -> Void

    private static let queue = DispatchQueue(label: "bluejay.bluez.notify")

    init(descriptor: Int32, mtu: Int, deliver: @escaping @Sendable ([[UInt8]]) -> Void, closed: @escaping @Sendable () -> Void) {
        self.descriptor = descriptor
        self.mtu = mtu
        self.deliver = deliver
        self.closed = closed
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: Self.queue)
    }

    func start() {
        source.setEventHandler { [self] in readAvailable() }
        source.setCancelHandler { [descriptor] in _ = Glibc.close(descriptor) }
        source.resume()
    }

    private func readAvailable() {
        var values: [[UInt8]] = []
        // A value is at most the ATT MTU - 3; a larger buffer never truncates one.
        var buffer = [UInt8](repeating: 0, count: max(mtu, 23) + 8)
        var ended = false
        while values.count < 256 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                values.append(Array(buffer[0..<count]))
            } else if count == 0 {
                ended = true
                break
            } else {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { ended = true }
                break
            }
        }
        if !values.isEmpty, !isClosed.load(ordering: .acquiring) { deliver(values) }
        if ended, !isClosed.exchange(true, ordering: .acquiringAndReleasing) {
            source.cancel()
            closed()
        }
    }

    /// Stops reading and closes the socket, which tells BlueZ to stop the notifications.
    func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        source.cancel()
    }
}

/// The socket of `AcquireWrite`: each write is one Write Without Response.
final class BlueZWriteSocket: Sendable {
    private let descriptor: Mutex<Int32>
    let mtu: Int

    init(descriptor: Int32, mtu: Int) {
        self.descriptor = Mutex(descriptor)
        self.mtu = mtu
    }

    /// Sends one value; `false` when the socket is gone (BlueZ closed it) and the caller should
    /// fall back to WriteValue.
    func write(_ value: [UInt8]) throws -> Bool {
        try descriptor.withLock { descriptor throws -> Bool in
            guard descriptor >= 0 else { return false }
            while true {
                let sent = value.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent == value.count { return true }
                if sent < 0, errno == EINTR { continue }
                _ = Glibc.close(descriptor)
                descriptor = -1
                return false
            }
        }
    }

    func close() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            descriptor = -1
        }
    }
}
