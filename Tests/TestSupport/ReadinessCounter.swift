import BluetoothPeripheral
import Synchronization
import Testing

/// Counts ``PeripheralConnectionEvent/readyToUpdateSubscribers(_:)`` events, to wait for one:
/// after a value update found a subscriber's queue full, the manager says when to go on.
public final class ReadinessCounter: Sendable {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    private let ready = Count()
    private let task: Task<Void, Never>

    /// Counts the readiness events of `events` (`PeripheralManager.connectionEvents()`).
    public init(_ events: AsyncStream<PeripheralConnectionEvent>) {
        let ready = self.ready
        task = Task {
            for await event in events {
                if case .readyToUpdateSubscribers = event { ready.value.withLock { $0 += 1 } }
            }
        }
    }

    deinit { task.cancel() }

    /// Returns once a readiness event came (taking it), or throws ``TestTimeout`` after `timeout`.
    public func waitForReady(timeout: Duration = hangGuard) async throws {
        try await waitUntil("the manager says its queue drained", timeout: timeout) {
            ready.value.withLock { count -> Bool in
                guard count > 0 else { return false }
                count -= 1
                return true
            }
        }
    }
}

extension PeripheralManager {
    /// Updates a value, and when a subscriber's queue is full waits for it to drain and
    /// tries again, as an application should. Returns how many times the queue was full.
    @discardableResult
    public func deliver(_ value: [UInt8], to characteristic: GATTPublishedCharacteristic, readiness: ReadinessCounter,
                        readyTimeout: Duration = .seconds(30)) async throws -> Int {
        var full = 0
        while true {
            let result = try await updateValue(value, for: characteristic)
            guard case .queueFull? = result.shortfall else {
                #expect(result.succeeded, "\(result)")
                return full
            }
            full += 1
            try await readiness.waitForReady(timeout: readyTimeout)
        }
    }
}
