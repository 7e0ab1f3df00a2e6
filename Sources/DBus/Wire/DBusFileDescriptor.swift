#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A Unix file descriptor sent or received in a message (type `h`), owned by this object:
/// it is closed when the object goes away, unless ``take()`` handed it over first.
///
/// Received descriptors are close-on-exec. Sending one leaves it open here: the receiver gets
/// its own copy from the kernel.
///
/// ```swift
/// // BlueZ's AcquireNotify answers (h fd, q mtu):
/// let reply = try await characteristic.call("org.bluez.GattCharacteristic1", "AcquireNotify", [.dictionary([:])])
/// let socket = reply[0].fileDescriptor?.take()   // now the caller's to close
/// ```
public final class DBusFileDescriptor: Hashable, Sendable, CustomStringConvertible {
    private let state: Mutex<Int32>

    /// Takes ownership of `descriptor`, which must be open.
    public init(taking descriptor: Int32) {
        state = Mutex(descriptor)
    }

    /// A close-on-exec duplicate of `descriptor`, which stays the caller's.
    public static func duplicating(_ descriptor: Int32) throws(DBusError) -> DBusFileDescriptor {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .systemCallFailed("fcntl(F_DUPFD_CLOEXEC)", errno: errno) }
        return DBusFileDescriptor(taking: copy)
    }

    deinit {
        close()
    }

    /// The descriptor, still owned by this object (`nil` once taken or closed). Do not close it.
    public var descriptor: Int32? {
        state.withLock { $0 >= 0 ? $0 : nil }
    }

    /// Hands the descriptor over: the caller closes it from now on. `nil` if it was taken or
    /// closed already.
    public func take() -> Int32? {
        state.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor >= 0 ? descriptor : nil
        }
    }

    /// Closes the descriptor now, unless it was taken.
    public func close() {
        let descriptor = take()
        if let descriptor {
            #if canImport(Glibc)
            _ = Glibc.close(descriptor)
            #elseif canImport(Darwin)
            _ = Darwin.close(descriptor)
            #endif
        }
    }

    public var description: String {
        descriptor.map { "fd \($0)" } ?? "fd (closed)"
    }

    /// Identity: two objects are equal only if they are the same object.
    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
