import BluetoothCore
import BluetoothHost
import Foundation

extension Bluejay {
    /// Scans for peripherals. The scan waits its turn in the queue like every request and
    /// holds the queue until it stops; only one scan runs at a time.
    ///
    /// - Parameters:
    ///   - duration: seconds until the scan stops on its own; 0 (the default) scans until
    ///     stopped.
    ///   - allowDuplicates: report a peripheral each time it is heard (when its RSSI moved by
    ///     `throttleRSSIDelta` since its last report) instead of once; enables `expired`.
    ///   - throttleRSSIDelta: see `allowDuplicates`.
    ///   - serviceIdentifiers: report only peripherals that advertise one of these; `nil` for all.
    ///   - discovery: each new discovery and all discoveries so far; returns what to do next.
    ///   - expired: with duplicates allowed, a peripheral not heard for longer than its
    ///     advertising suggests (an estimate: the longest recent gap between its
    ///     advertisements times four, from 2 s to 30 s), and the discoveries left.
    ///   - timeout: seconds within which something must be discovered, else the scan stops
    ///     with ``BluejayError/scanTimeout(after:)``; 0 (the default) for no such limit. Once
    ///     something was discovered the scan goes on (until `duration`, a stop or a connect).
    ///   - endsWhenConnecting: a connection requested while the scan runs ends it (without an
    ///     error) instead of waiting behind it in the queue, as LittleBluetooth's scans do.
    ///   - stopped: the discoveries at the end, and an error unless the scan was stopped on
    ///     purpose (``ScanAction/stop``, a duration, ``stopScanning()``, ``ScanAction/connect(_:_:_:_:)``).
    ///
    /// All three callbacks run on the callback queue. Returning ``ScanAction/connect(_:_:_:_:)``
    /// stops the scan, then connects before anything else queued runs.
    public func scan(duration: TimeInterval = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5,
                     timeout: TimeInterval = 0, endsWhenConnecting: Bool = false,
                     serviceIdentifiers: [ServiceIdentifier]?,
                     discovery: @escaping @Sendable (ScanDiscovery, [ScanDiscovery]) -> ScanAction,
                     expired: (@Sendable (ScanDiscovery, [ScanDiscovery]) -> ScanAction)? = nil,
                     stopped: @escaping @Sendable ([ScanDiscovery], BluejayError?) -> Void) {
        let queue = state.withLock { $0.callbackQueue }
        let report: @Sendable ([ScanDiscovery], BluejayError?) -> Void = { discoveries, error in
            queue.async { stopped(discoveries, error) }
        }
        // Called on the callback queue, where the scan's bookkeeping runs too.
        let decide: @Sendable (ScanEvent, [ScanDiscovery]) -> ScanAction = { event, discoveries in
            switch event {
            case let .discovered(found): return discovery(found, discoveries)
            case let .expired(lost): return expired?(lost, discoveries) ?? .continue
            }
        }
        startScan(duration: duration, allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta, timeout: timeout,
                  endsWhenConnecting: endsWhenConnecting, serviceIdentifiers: serviceIdentifiers,
                  reporting: .callbacks(queue: queue, decide: decide), stopped: report)
    }

    /// How many peripherals a scan tracks at once (found, or waiting for their scan
    /// response), and how many it keeps blacklisted: enough for 10,000 devices with random
    /// addresses. Past it the least recently heard are forgotten, a sixteenth of the limit at
    /// once; with duplicates allowed each forgotten discovery is reported to `expired`, and a
    /// peripheral heard again is discovered again. A crowd, or a peer rotating random
    /// addresses, must not make a scan's memory grow without bound. The host's state per
    /// peer (`ScanOptions/peerLimit`) follows the same limit.
    public static let scanPeripheralLimit = ScanOptions.defaultPeerLimit

    /// Stops the scan (running or queued); its `stopped` callback gets no error.
    public func stopScanning() {
        guard let session = state.withLock({ $0.scan }) else { return }
        log(.info, "stopping the scan")
        if !session.requestStop(error: nil) {
            runner.cancel(session.operationID)
        }
    }

    /// Queues a scan; shared by the callback and `async` APIs.
    @discardableResult
    func startScan(duration: TimeInterval, allowDuplicates: Bool, throttleRSSIDelta: Int, timeout: TimeInterval = 0,
                   endsWhenConnecting: Bool = false, serviceIdentifiers: [ServiceIdentifier]?,
                   reporting: ScanSession.Reporting,
                   stopped: @escaping @Sendable ([ScanDiscovery], BluejayError?) -> Void) -> ScanSession? {
        if let refusal = refusal(for: "scan") {
            stopped([], refusal)
            return nil
        }
        var uuids: [BluetoothUUID] = []
        for service in serviceIdentifiers ?? [] {
            guard let uuid = service.uuid else {
                stopped([], .invalidUUID(service.uuidString))
                return nil
            }
            uuids.append(uuid)
        }
        var configuration = ScanTracker.Configuration()
        configuration.allowDuplicates = allowDuplicates
        configuration.throttleRSSIDelta = throttleRSSIDelta
        let request = ScanSession.Request(
            tracker: configuration,
            duration: duration > 0 ? .clampedSeconds(duration) : nil,
            serviceUUIDs: uuids,
            timeout: timeout > 0 ? .clampedSeconds(timeout) : nil,
            endsWhenConnecting: endsWhenConnecting)
        let id = runner.makeID()
        let session = ScanSession(operationID: id, request: request, reporting: reporting, stopped: stopped)
        let accepted = state.withLock { state -> Bool in
            guard state.scan == nil else { return false }
            state.scan = session
            return true
        }
        guard accepted else {
            stopped([], .multipleScanNotSupported)
            return nil
        }
        let description = "scan\(uuids.isEmpty ? "" : " for \(uuids.map(\.description).joined(separator: ", "))")"
            + "\(allowDuplicates ? " with duplicates" : "")"
        let operation = QueuedOperation.make(id: id, name: description, kind: .scan, work: { [self] in
            let backend = try self.requireBackend()
            self.log(.info, "\(description) started")
            let (discoveries, error, connect) = await session.run(backend: backend)
            if let forgotten = session.forgottenSummary { self.log(.warning, forgotten) }
            self.endScan(session, discoveries: discoveries, error: error)
            if let connect {
                self.log(.info, "the scan found \(connect.discovery.peripheralIdentifier): connecting")
                let queue = self.state.withLock { $0.callbackQueue }
                self.requestConnection(to: connect.discovery.peripheralIdentifier, timeout: connect.timeout, purpose: .request,
                                       atFront: true, retryLimits: .replace(nil)) { result in queue.async { connect.completion(result) } }
            }
        }, deliver: { [self] result in
            if case let .failure(error) = result { self.endScan(session, discoveries: [], error: error) }
        })
        runner.submit(operation)
        return session
    }

    private func endScan(_ session: ScanSession, discoveries: [ScanDiscovery], error: BluejayError?) {
        state.withLock { state in
            if state.scan === session { state.scan = nil }
        }
        log(.info, "scan stopped with \(discoveries.count) discover\(discoveries.count == 1 ? "y" : "ies")\(error.map { ": \($0)" } ?? "")")
        session.finish(discoveries: discoveries, error: error)
    }
}
