import BluetoothCore
import BluetoothHCI
import BluetoothTransport

/// Why a host operation failed. Every public operation of `BluetoothHost` throws this type.
public enum HostError: Error, Equatable, Sendable, CustomStringConvertible {
    /// ``LEHost/powerOn()`` has not completed.
    case notPoweredOn
    /// The transport to the controller is gone.
    case transportClosed(TransportError?)
    /// An HCI command failed.
    case hci(HCIError)
    /// The peer answered with an ATT Error Response.
    case att(ATTError)
    /// The connection ended; the reason is the one the controller reported.
    case disconnected(reason: HCIStatus)
    /// The controller could not establish the connection.
    case connectionFailed(DeviceAddress, HCIStatus)
    /// The peer did not answer the connection request in time; the attempt was cancelled.
    case connectionTimeout(DeviceAddress)
    /// The peer did not answer an ATT request within the transaction timeout (30 s in the
    /// specification, Core 6.0, Vol 3, Part F, 3.3.3); the ATT bearer is closed.
    case attTransactionTimeout
    /// The ATT bearer was closed earlier (after a transaction timeout).
    case attBearerClosed
    /// The operation was cancelled by the caller.
    case cancelled
    /// The deadline of the caller's `RequestScope` passed before the
    /// response; the request keeps the bearer until its response comes.
    case deadlineExceeded
    /// Only one scan runs at a time.
    case scanInProgress
    /// A procedure of the link or the controller did not complete within its time limit (what
    /// it was, and the limit).
    case procedureTimeout(String)
    /// The peer sent something that breaks the protocol.
    case protocolViolation(String)
    /// A service, characteristic or descriptor is not on the peer.
    case notFound(String)
    /// The peer or the controller does not support what was asked.
    case unsupported(String)
    /// The controller reported a hardware error (Core 6.0, Vol 4, Part E, 7.7.16, with its
    /// implementation-specific code): what it was doing (a scan, a connection attempt) ended,
    /// and the host initializes it again.
    case controllerFailure(hardwareCode: UInt8)
    /// An argument is out of the range the specification allows.
    case invalidArgument(String)
    /// Pairing failed (Core 6.0, Vol 3, Part H).
    case pairingFailed(PairingFailure)
    /// The controller could not encrypt the link with a stored key. With
    /// `BluetoothHCI/HCIStatus/pinOrKeyMissing` the peer no longer has the bond: remove it and
    /// pair again.
    case encryptionFailed(HCIStatus)
    /// The controller or the peer refused a PHY update, a data length update or a connection
    /// parameter update.
    case linkProcedureRefused(LinkProcedureRefusal)

    public var description: String {
        switch self {
        case .notPoweredOn: return "the host is not powered on"
        case let .transportClosed(error): return error.map { "\($0)" } ?? "the HCI transport is closed"
        case let .hci(error): return "\(error)"
        case let .att(error): return "\(error)"
        case let .disconnected(reason): return "disconnected: \(reason)"
        case let .connectionFailed(peer, status): return "connection to \(peer) failed: \(status)"
        case let .connectionTimeout(peer): return "connection to \(peer) timed out"
        case .attTransactionTimeout: return "the peer did not answer an ATT request within the transaction timeout; the ATT bearer is closed"
        case .attBearerClosed: return "the ATT bearer is closed after a transaction timeout; reconnect to use GATT again"
        case .cancelled: return "cancelled"
        case .deadlineExceeded: return "the deadline passed before the peer answered"
        case .scanInProgress: return "a scan is already running"
        case let .procedureTimeout(what): return "\(what) did not complete in time"
        case let .protocolViolation(what): return "protocol violation: \(what)"
        case let .notFound(what): return "\(what) not found"
        case let .unsupported(what): return "not supported: \(what)"
        case let .controllerFailure(code): return "the controller failed (hardware error \(Hex.format(code))) and is initialized again"
        case let .invalidArgument(what): return "invalid argument: \(what)"
        case let .pairingFailed(failure): return "pairing failed: \(failure)"
        case let .encryptionFailed(status) where status == .pinOrKeyMissing:
            return "the peer has no key for this device (it lost or removed the bond): remove the bond and pair again"
        case let .encryptionFailed(status): return "encryption failed: \(status)"
        case let .linkProcedureRefused(refusal): return "\(refusal)"
        }
    }

    /// Maps errors from lower layers into ``HostError``.
    static func wrap(_ error: any Error) -> HostError {
        switch error {
        case let error as HostError: return error
        case let error as HCIError:
            switch error {
            case let .transportClosed(reason): return .transportClosed(reason)
            case .cancelled: return .cancelled
            default: return .hci(error)
            }
        case let error as ATTError: return .att(error)
        case is CancellationError: return .cancelled
        default: return .protocolViolation("\(error)")
        }
    }
}
