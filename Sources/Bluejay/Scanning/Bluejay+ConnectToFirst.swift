import BluetoothHost
import Foundation

extension Bluejay {
    /// Scans, and connects to the first peripheral that `matches` (BlueCap's scan-then-connect,
    /// `afterDiscovered`): the scan ends at that discovery and the connection is made before
    /// anything queued after this call.
    ///
    /// - Parameters:
    ///   - serviceIdentifiers: the services to scan for; `nil` scans for every peripheral.
    ///   - scanTimeout: seconds to find a match; past it the call fails with
    ///     ``BluejayError/scanTimeout(after:)``. 0 (the default) scans until a match or
    ///     cancellation.
    ///   - connectionTimeout: the connection attempt's limit, as in ``connect(_:timeout:)``.
    ///   - matches: decides whether a discovery is the one to connect to.
    /// - Returns: the peripheral connected.
    /// - Throws: the scan's or the connection's error; ``BluejayError/cancelled`` when the scan
    ///   was stopped (``stopScanning()``) before a match.
    @discardableResult
    public func connectToFirst(serviceIdentifiers: [ServiceIdentifier]?, scanTimeout: TimeInterval = 0, connectionTimeout: Timeout = .none,
                               where matches: @escaping @Sendable (ScanDiscovery) -> Bool = { _ in true }) async throws(BluejayError) -> PeripheralIdentifier {
        var found: ScanDiscovery?
        let events = ScanEventStream()
        let session = startScan(duration: 0, allowDuplicates: false, throttleRSSIDelta: 5, endsWhenConnecting: true,
                                serviceIdentifiers: serviceIdentifiers, reporting: events.reporting, stopped: events.stopped)
        if let session {
            // Leaving the loop (a match, cancellation) ends the stream, and the scan with it.
            events.continuation.onTermination = { [weak self] in
                guard let self, self.state.withLock({ $0.scan === session }) else { return }
                if !session.requestStop(error: nil) { self.runner.cancel(session.operationID) }
            }
        }
        // The limit is on finding a match: a scan's own `timeout` stops applying at the first
        // discovery, matching or not.
        let limit: Duration? = scanTimeout > 0 ? .clampedSeconds(scanTimeout) : nil
        let timer = session.flatMap { session in
            limit.map { limit in
                Task { [clock, runner] in
                    guard await sleepUnlessCancelled(limit, clock: clock) else { return }
                    if !session.requestStop(error: .scanTimeout(after: limit)) { runner.cancel(session.operationID) }
                }
            }
        }
        defer { timer?.cancel() }
        do {
            for try await event in events.stream {
                if case let .discovered(discovery) = event, matches(discovery) {
                    found = discovery
                    break
                }
            }
        } catch {
            throw BluejayError(error, operation: "scanning")
        }
        guard let found else { throw .cancelled }
        log(.info, "scan-then-connect: \(found) matched")
        return try await connect(found.peripheralIdentifier, timeout: connectionTimeout)
    }
}
