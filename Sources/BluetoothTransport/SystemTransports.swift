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
        case .bluez:
            throw Self.blueZIsNoTransport(specification)
        }
        #else
        if case .virtual = specification {
            throw .invalidSpecification(
                specification.description,
                reason: "the in-process virtual controller is opened by the Bluejay layer or the CLI, not by BluetoothTransport"
            )
        }
        if case .bluez = specification { throw Self.blueZIsNoTransport(specification) }
        throw .openFailed(specification.description, errno: ENOSYS, hint: "Operating-system transports are implemented for Linux only")
        #endif
    }

    /// `bluez` names a backend, not a controller: the error says where it is opened.
    static func blueZIsNoTransport(_ specification: TransportSpecification) -> TransportError {
        .invalidSpecification(
            specification.description,
            reason: "BlueZ keeps that adapter: it is not an HCI transport; use the BlueZ backend (Bluejay's StartOptions, BluejayCentral.open, "
                + "or the CLI's --hci \(specification)), or for our own host take the adapter from BlueZ and use hciN")
    }

    /// Parses `text` (see ``TransportSpecification``) and opens it.
    public static func open(_ text: String) throws(TransportError) -> any HCITransport {
        try open(TransportSpecification(parsing: text))
    }
}
