import BluetoothCore
import BluetoothHCI

/// Runs work against a deadline on the backend's clock.
enum BlueZDeadline {
    /// `body`'s result, or `nil` when `deadline` passes first (the body is then cancelled). No
    /// deadline: the body's result. Cancelling the caller cancels the body.
    static func run<T: Sendable>(until deadline: BluetoothClock.Instant?, clock: BluetoothClock,
                                 _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        guard let deadline else { return try await body() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await clock.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { return nil }
            return first
        }
    }
}

/// Why a link ended, as BlueZ tells it, in HCI terms.
enum BlueZDisconnection {
    /// The HCI reason of BlueZ's `Device1.Disconnected` reason (BlueZ 5.67 and later send it;
    /// 5.66 does not, and a link that ends without it has no known reason).
    static func status(forReason reason: String) -> HCIStatus? {
        switch reason {
        case "org.bluez.Reason.Local": return .connectionTerminatedByLocalHost
        case "org.bluez.Reason.Remote": return .remoteUserTerminatedConnection
        case "org.bluez.Reason.Timeout": return .connectionTimeout
        case "org.bluez.Reason.Authentication": return .authenticationFailure
        default: return nil
        }
    }

    /// The HCI status of a failed `Device1.Connect` (its message is BlueZ's
    /// `mgmt` status or errno text, e.g. "le-connection-abort-by-local").
    static func status(forConnectFailure message: String) -> HCIStatus {
        switch message {
        case "le-connection-abort-by-local", "Operation already in progress": return .connectionFailedToBeEstablished
        case "Software caused connection abort": return .connectionTerminatedByLocalHost
        case "Connection timed out", "Page Timeout": return .connectionTimeout
        default: return .connectionFailedToBeEstablished
        }
    }
}
