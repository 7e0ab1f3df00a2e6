#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one entry point from a ``TransportSpecification`` to an open operating-system
/// transport: `try SystemTransports.open("tcp:127.0.0.1:9000")`.
public enum SystemTransports {
    /// Opens the transport `specification` names. The transport is not started yet: call
    /// ``HCITransport/start(receiver:)`` on it (usually through the HCI layer).
    ///
    /// `virtual` is not opened here: the in-process virtual controller lives in a higher layer.
    public static func open(_ specification: TransportSpecification) throws(TransportError) -> any HCITransport {
        #if canImport(Glibc)
        switch specification {
        case let .tcp(host, port):
            return try TCPTransport.connect(host: host, port: port)
        case let .unix(path):
            return try UnixSocketTransport.connect(path: path)
        case let .serial(path, baudRate):
            return try SerialTransport.open(path: path, baudRate: baudRate)
        case let .hciUserChannel(index):
            return try HCIUserChannelTransport.open(index: index)
        case .virtual:
            throw .invalidSpecification(
                specification.description,
                reason: "the in-process virtual controller is opened by the Bluejay layer or the CLI, not by BluetoothTransport"
            )
        }
        #else
        if case .virtual = specification {
            throw .invalidSpecification(
                specification.description,
                reason: "the in-process virtual controller is opened by the Bluejay layer or the CLI, not by BluetoothTransport"
            )
        }
        throw .openFailed(specification.description, errno: ENOSYS, hint: "Operating-system transports are implemented for Linux only")
        #endif
    }

    /// Parses `text` (see ``TransportSpecification``) and opens it.
    public static func open(_ text: String) throws(TransportError) -> any HCITransport {
        try open(TransportSpecification(parsing: text))
    }
}
