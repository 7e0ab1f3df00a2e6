import Bluejay
import BluetoothHCI
import Synchronization

/// Everything counted during a run; safe to update from any task or thread.
final class SoakStatistics: Sendable {
    struct Outcomes: Sendable {
        var succeeded = 0
        var failed = 0
        /// Time spent in the operations that succeeded.
        var succeededTime: Duration = .zero
        /// The longest an operation took, whatever its outcome.
        var longest: Duration = .zero

        /// The mean time of a successful operation.
        var meanTime: Duration? { succeeded > 0 ? succeededTime / succeeded : nil }
    }

    struct Snapshot: Sendable {
        var operations: [SoakOperation: Outcomes] = [:]
        /// Failed operations by error type, then by operation.
        var errors: [String: [SoakOperation: Int]] = [:]
        var faults: [String: Int] = [:]
        var peripheralErrors: [String: Int] = [:]
        var hangs: [String] = []
        var integrityViolations = 0
        var integrityExamples: [String] = []

        var operationsDone: Int { operations.values.reduce(0) { $0 + $1.succeeded + $1.failed } }
        var faultsInjected: Int { faults.values.reduce(0, +) }
    }

    /// How many examples of each kind of problem the report quotes.
    static let examplesKept = 10

    private let state = Mutex(Snapshot())

    var snapshot: Snapshot { state.withLock { $0 } }

    func succeeded(_ operation: SoakOperation, in time: Duration) {
        state.withLock { state in
            state.operations[operation, default: Outcomes()].succeeded += 1
            state.operations[operation, default: Outcomes()].succeededTime += time
            state.operations[operation, default: Outcomes()].longest = max(state.operations[operation, default: Outcomes()].longest, time)
        }
    }

    /// An operation failed; `type` names the error (see ``type(of:)``).
    func failed(_ operation: SoakOperation, type: String, in time: Duration) {
        state.withLock { state in
            state.operations[operation, default: Outcomes()].failed += 1
            state.operations[operation, default: Outcomes()].longest = max(state.operations[operation, default: Outcomes()].longest, time)
            state.errors[type, default: [:]][operation, default: 0] += 1
        }
    }

    func injected(_ fault: String) {
        state.withLock { $0.faults[fault, default: 0] += 1 }
    }

    /// Something a peripheral could not do (send a notification, advertise again).
    func peripheralError(_ type: String) {
        state.withLock { $0.peripheralErrors[type, default: 0] += 1 }
    }

    /// An operation that did not return within ``SoakSettings/operationHangLimit``.
    func hang(_ description: String) {
        state.withLock { $0.hangs.append(description) }
    }

    /// A value read back that no write could have produced.
    func integrityViolation(_ description: String) {
        state.withLock { state in
            state.integrityViolations += 1
            if state.integrityExamples.count < Self.examplesKept { state.integrityExamples.append(description) }
        }
    }

    /// The error's case, with the detail that tells failures of the same case apart (the
    /// controller's status, the ATT error code) but not the peripheral or the handle.
    static func type(of error: BluejayError) -> String {
        switch error {
        case .notStarted: return "notStarted"
        case .alreadyStarted: return "alreadyStarted"
        case .stopped: return "stopped"
        case .bluetoothUnavailable: return "bluetoothUnavailable"
        case .notConnected: return "notConnected"
        case .alreadyConnected: return "alreadyConnected"
        case .alreadyConnecting: return "alreadyConnecting"
        case .connectionTimedOut: return "connectionTimedOut"
        case let .connectionFailed(_, status): return "connectionFailed (\(status))"
        case let .disconnected(_, reason): return "disconnected (\(reason.map { "\($0)" } ?? "transport closed"))"
        case .alreadyDisconnecting: return "alreadyDisconnecting"
        case .cancelled: return "cancelled"
        case let .timedOut(operation, _): return "timedOut (\(operationKind(operation)))"
        case .peripheralNotResponding: return "peripheralNotResponding"
        case let .attError(code, _, _): return "attError (\(code))"
        case .missingService: return "missingService"
        case .missingCharacteristic: return "missingCharacteristic"
        case .missingDescriptor: return "missingDescriptor"
        case .invalidUUID: return "invalidUUID"
        case .notSupported: return "notSupported"
        case .valueTooLong: return "valueTooLong"
        case .deserializationFailed: return "deserializationFailed"
        case .dataOutOfBounds: return "dataOutOfBounds"
        case .assembledTooMuchData: return "assembledTooMuchData"
        case .multipleScanNotSupported: return "multipleScanNotSupported"
        case .scanTimeout: return "scanTimeout"
        case .connectionTaskFailed: return "connectionTaskFailed"
        case .multipleListenTrapped: return "multipleListenTrapped"
        case .multipleListenReplaced: return "multipleListenReplaced"
        case .backgroundTaskRunning: return "backgroundTaskRunning"
        case .regularAPIInBackgroundTask: return "regularAPIInBackgroundTask"
        case .synchronizedPeripheralOutsideTask: return "synchronizedPeripheralOutsideTask"
        case .indefiniteFlush: return "indefiniteFlush"
        case .restorationFailed: return "restorationFailed"
        case .l2cap: return "l2cap"
        case let .host(hostError): return "host (\(String(describing: hostError).prefix(60)))"
        }
    }

    /// Whether `error` says the link or the stack went away (a disconnection, a transport or
    /// controller failure, a stop, a timeout waiting on a dead link): what the injected faults
    /// cause. Anything else (a value that is not a numbered one, a refusal) is a defect.
    static func isLinkFailure(_ error: BluejayError) -> Bool {
        switch error {
        case .notConnected, .disconnected, .connectionTimedOut, .connectionFailed, .stopped, .cancelled, .timedOut, .peripheralNotResponding,
             .bluetoothUnavailable, .notStarted:
            return true
        case let .host(hostError):
            switch hostError {
            case .notPoweredOn, .transportClosed, .hci, .disconnected, .connectionFailed, .connectionTimeout, .attTransactionTimeout,
                 .attBearerClosed, .cancelled, .deadlineExceeded, .controllerFailure:
                return true
            default:
                return false
            }
        default:
            return false
        }
    }

    /// The first words of an operation's description, without identifiers: "read", "write", "connect to".
    private static func operationKind(_ operation: String) -> String {
        let words = operation.split(separator: " ")
        return words.prefix { !$0.contains(":") && !$0.contains("(") && Int($0) == nil }.prefix(3).joined(separator: " ")
    }
}
