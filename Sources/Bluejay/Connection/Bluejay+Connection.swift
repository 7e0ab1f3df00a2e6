import BluetoothHCI
import BluetoothHost
import Foundation

extension Bluejay {
    // MARK: Connecting

    /// Connects to a peripheral (queued like every request). Fails at once with
    /// ``BluejayError/alreadyConnected(_:)`` or ``BluejayError/alreadyConnecting(_:)``:
    /// Bluejay talks to one peripheral at a time.
    ///
    /// Once connected, the ATT MTU is exchanged, Service Changed indications are enabled
    /// (for the ``ServiceObserver``s) and ``shouldAutoReconnect`` becomes `true`.
    /// - Parameters:
    ///   - peripheral: the peripheral to connect to, usually from a scan.
    ///   - completion: called on the callback queue with the outcome.
    ///   - timeout: how long to try; ``Timeout/none`` (the default) tries until cancelled.
    ///     Auto-reconnect uses the same timeout.
    ///   - warningOptions: no effect on Linux (see ``WarningOptions``).
    public func connect(_ peripheral: PeripheralIdentifier, timeout: Timeout = .none, warningOptions: WarningOptions? = nil,
                        completion: @escaping @Sendable (ConnectionResult) -> Void) {
        let deliver = onCallbackQueue(completion)
        if let refusal = refusal(for: "connect") {
            deliver(.failure(refusal))
            return
        }
        if let warningOptions, warningOptions != .default {
            log(.notice, "warning options \(warningOptions) have no effect on Linux")
        }
        requestConnection(to: peripheral, timeout: timeout, purpose: .request, atFront: false, retryLimits: .replace(nil), deliver: deliver)
    }

    /// What a connection request does to the retry limits of auto-reconnect.
    enum RetryLimitsUpdate: Sendable {
        /// An attempt of the current request (a retry, an auto-reconnect, a restoration).
        case keep
        /// A new request from the app, with these limits (`nil`: Bluejay's own rules).
        case replace(AutoReconnectPolicy.RetryLimits?)
    }

    /// Queues a connection attempt, unless one is made or running.
    func requestConnection(to peripheral: PeripheralIdentifier, timeout: Timeout, purpose: ConnectPurpose, atFront: Bool,
                           id: UInt64? = nil, retryLimits: RetryLimitsUpdate = .keep,
                           deliver: @escaping @Sendable (ConnectionResult) -> Void) {
        let id = id ?? runner.makeID()
        let refusal = state.withLock { state -> BluejayError? in
            switch state.link {
            case let .connected(link): return .alreadyConnected(link.identifier)
            case let .connecting(other, _): return .alreadyConnecting(other)
            case .disconnecting: return .alreadyDisconnecting
            case .idle:
                state.link = .connecting(peripheral, operationID: id)
                if case let .replace(limits) = retryLimits { state.reconnect.useRetryLimits(limits) }
                return nil
            }
        }
        if let refusal {
            deliver(.failure(refusal))
            return
        }
        if case .request = purpose, !atFront { endScanForConnection() }
        let operation = QueuedOperation.make(id: id, name: "connect to \(peripheral)", kind: .connect, work: { [self] in
            try await self.performConnection(to: peripheral, timeout: timeout, purpose: purpose, operationID: id)
        }, deliver: { [self] result in
            if case let .failure(error) = result {
                self.connectionAttemptFailed(peripheral, operationID: id, error: error, timeout: timeout, purpose: purpose)
            }
            deliver(result)
        })
        runner.submit(operation, atFront: atFront)
    }

    /// Ends a scan started with `endsWhenConnecting` (it holds the queue, so the connection
    /// would wait for it): its `stopped` gets no error, its stream finishes.
    private func endScanForConnection() {
        guard let session = state.withLock({ $0.scan }), session.request.endsWhenConnecting else { return }
        log(.info, "a connection was requested: ending the scan")
        if !session.requestStop(error: nil) { runner.cancel(session.operationID) }
    }

    /// What every new link needs before use: its MTU, the cached database of a bonded or
    /// trusted peer, and Service Changed indications for the ServiceObserver (subscribed to before they are enabled, so none is missed).
    func prepareLink(_ connection: any CentralConnection, identifier: PeripheralIdentifier) async -> (PeripheralLink, AsyncStream<GATTServiceChange>) {
        let raisesSecurity = state.withLock { $0.options.raisesSecurityAutomatically }
        let link = PeripheralLink(connection: connection, identifier: identifier, raisesSecurity: raisesSecurity)
        let changes = connection.serviceChanges()
        switch await connection.prepareCachedDatabase(timeLimit: operationTimeLimit, clock: clock) {
        case .success(.notEligible): break
        case let .success(outcome): log(.info, "database of \(identifier): \(outcome)")
        case let .failure(error): log(.info, "cached database of \(identifier) not used: \(error)")
        }
        do {
            try await withTimeLimit(operationTimeLimit, clock: clock, operation: "enabling Service Changed indications") {
                _ = try await connection.enableServiceChangedIndications()
            }
        } catch {
            log(.info, "Service Changed indications of \(identifier) not enabled: \(error)")
        }
        return (link, changes)
    }

    private func performConnection(to peripheral: PeripheralIdentifier, timeout: Timeout, purpose: ConnectPurpose,
                                   operationID: UInt64) async throws -> PeripheralIdentifier {
        let backend = try requireBackend()
        var peripheral = peripheral
        log(.info, "connecting to \(peripheral) (\(purpose.logDescription), \(timeout))")
        let connection = try await backend.connect(to: peripheral, timeout: timeout)
        let stillWanted = state.withLock { state -> Bool in
            if case let .connecting(_, id) = state.link, id == operationID { return true }
            return false
        }
        guard stillWanted, !Task.isCancelled else {
            log(.info, "connected to \(peripheral) after the attempt was abandoned; disconnecting")
            try? await connection.disconnect(reason: .remoteUserTerminatedConnection)
            throw BluejayError.cancelled
        }
        // A bonded peer reached at a private address is known by its identity from now on.
        if let identity = connection.identity { peripheral = PeripheralIdentifier(address: identity, name: peripheral.name) }
        let (link, changes) = await prepareLink(connection, identifier: peripheral)
        guard connection.isConnected else {
            throw BluejayError.disconnected(peripheral, reason: connection.disconnectReason)
        }
        install(link, timeout: timeout, changes: changes)
        if case let .restore(listens) = purpose {
            let added = state.withLock { state -> [CharacteristicIdentifier] in
                guard state.restoration?.config.listenRestorer != nil else { return [] }
                return state.listens.addRestored(listens)
            }
            if !added.isEmpty { log(.info, "restoring listens on \(added.map(\.description).joined(separator: ", "))") }
        }
        await resubscribeListens(on: link)
        guard state.withLock({ $0.link.link === link }) else {
            // The link dropped while the listens were being enabled; that was handled already.
            throw BluejayError.disconnected(peripheral, reason: connection.disconnectReason)
        }
        do {
            try await runConnectionTasks(on: link)
        } catch {
            // The app refused the connection: an expected disconnection, no auto-reconnect.
            log(.warning, "\(error); disconnecting from \(peripheral)")
            state.withLock { $0.reconnect.disconnectionWasRequested() }
            try? await connection.disconnect(reason: .remoteUserTerminatedConnection)
            throw error
        }
        guard state.withLock({ $0.link.link === link }) else {
            throw BluejayError.disconnected(peripheral, reason: connection.disconnectReason)
        }
        saveCurrentRestorationState()
        if case .request = purpose {
            announceConnection(peripheral, mtu: link.mtu)
        } else {
            announceConnection(peripheral, mtu: link.mtu, automatic: true)
        }
        return peripheral
    }

    /// Makes `link` the connected one and watches it.
    func install(_ link: PeripheralLink, timeout: Timeout, changes: AsyncStream<GATTServiceChange>) {
        let disconnection = Task { [weak self] in
            // Cancelled only when Bluejay lets go of the link without waiting for it.
            guard let reason = try? await link.connection.waitForDisconnection() else { return }
            self?.linkDidDrop(link, reason: reason)
        }
        let serviceChanges = Task { [weak self] in
            for await change in changes {
                let invalidated = link.invalidate(change)
                self?.servicesDidChange(on: link, invalidated: invalidated)
            }
        }
        state.withLock { state in
            state.link = .connected(link)
            state.reconnect.didConnect()
            state.lastPeripheral = link.identifier
            state.lastTimeout = timeout
            state.watchers.forEach { $0.cancel() }
            state.watchers = [disconnection, serviceChanges]
        }
    }

    /// Tells the observers and the event streams; `automatic` for a connection Bluejay made on
    /// its own (auto-reconnect, restoration).
    func announceConnection(_ peripheral: PeripheralIdentifier, mtu: Int, automatic: Bool = false) {
        log(.info, "connected to \(peripheral), ATT MTU \(mtu); auto-reconnect on")
        let observers = state.withLock { $0.connectionObservers.live() }
        onCallbackQueue { observers.forEach { $0.connected(to: peripheral) } }
        broadcast(.connected(peripheral))
        if automatic { broadcast(.autoConnected(peripheral)) }
    }

    private func servicesDidChange(on link: PeripheralLink, invalidated: [ServiceIdentifier]) {
        let observers = state.withLock { state -> [any ServiceObserver]? in
            guard state.link.link === link else { return nil }
            return state.serviceObservers.live()
        }
        guard let observers else { return }
        log(.info, "the database of \(link.identifier) changed; invalidated services: \(invalidated.isEmpty ? "none" : invalidated.map(\.description).joined(separator: ", "))")
        onCallbackQueue { observers.forEach { $0.didModifyServices(from: link.identifier, invalidatedServices: invalidated) } }
        broadcast(.servicesModified(link.identifier, invalidated: invalidated))
    }

    private func connectionAttemptFailed(_ peripheral: PeripheralIdentifier, operationID: UInt64, error: BluejayError,
                                         timeout: Timeout, purpose: ConnectPurpose) {
        let (wasCurrent, running) = state.withLock { state -> (Bool, Bool) in
            var current = false
            if case let .connecting(_, id) = state.link, id == operationID {
                state.link = .idle
                current = true
            }
            return (current, state.lifecycle == .running)
        }
        switch purpose {
        case .request:
            log(.info, "connecting to \(peripheral) failed: \(error)")
            broadcast(.connectionFailed(peripheral, error: error))
        case .restore:
            log(.warning, "restoring the connection to \(peripheral) failed: \(error)")
            reportRestoration(of: peripheral, error: error)
            broadcast(.connectionFailed(peripheral, error: error))
        case .reconnect:
            guard wasCurrent, running, error != .cancelled, error != .stopped else {
                log(.info, "auto-reconnect to \(peripheral) abandoned: \(error)")
                return
            }
            let timedOut: Bool
            if case .connectionTimedOut = error { timedOut = true } else { timedOut = false }
            if timedOut, state.withLock({ $0.reconnect.retryAfterTimeout() }) {
                log(.warning, "auto-reconnect to \(peripheral) timed out after \(timeout); trying again (a timeout retry)")
                broadcast(.reconnecting(peripheral))
                requestConnection(to: peripheral, timeout: timeout, purpose: .reconnect, atFront: true) { _ in }
                return
            }
            let next = state.withLock { $0.reconnect.reconnectAttemptFailed(timedOut: timedOut) }
            guard let next else {
                log(.warning, "auto-reconnect to \(peripheral) timed out after \(timeout); giving up")
                endAllListens(notifying: nil)
                saveRestoration(RestorationRecord())
                broadcast(.gaveUp(peripheral, error: error))
                return
            }
            log(.warning, "auto-reconnect to \(peripheral) failed (\(error)); an unexpected disconnection")
            let handler = state.withLock { $0.disconnectHandler.live().first }
            onCallbackQueue { [self] in
                let mode = handler?.didDisconnect(from: peripheral, with: error, willReconnect: next.willReconnect)
                Task {
                    // Do not hammer a controller that refuses: wait a little between attempts.
                    guard await sleepUnlessCancelled(Self.reconnectRetryDelay, clock: self.clock) else { return }
                    self.decideReconnection(to: peripheral, mode: mode, error: error)
                }
            }
        }
    }

    /// The wait between auto-reconnect attempts that failed other than by timing out.
    static let reconnectRetryDelay: Duration = .seconds(1)

    // MARK: Disconnections

    /// The link is down (whoever asked). Runs once per link.
    func linkDidDrop(_ link: PeripheralLink, reason: HCIStatus) {
        let outcome = state.withLock { state -> (AutoReconnectPolicy.Disconnection, [ListenRegistry.Listener], [ListenHandler],
                                                 [any ConnectionObserver], (any DisconnectHandler)?)? in
            guard let current = state.link.link, current === link else { return nil }
            state.link = .idle
            state.watchers.forEach { $0.cancel() }
            state.watchers = []
            let disconnection = state.reconnect.linkDidDrop()
            let ended = state.listens.linkDidDrop()
            let handlers = state.broadcastErrorsToListeners ? state.listens.records.values.flatMap(\.handlers) : []
            return (disconnection, ended, handlers, state.connectionObservers.live(), state.disconnectHandler.live().first)
        }
        guard let (disconnection, ended, handlers, observers, handler) = outcome else { return }
        let peripheral = link.identifier
        let error: BluejayError? = disconnection.isExpected ? nil : .disconnected(peripheral, reason: reason)
        if disconnection.isExpected {
            log(.info, "expected disconnection from \(peripheral) (\(reason)): requested by the app; auto-reconnect off")
        } else {
            log(.warning, "unexpected disconnection from \(peripheral): \(reason); auto-reconnect \(disconnection.willReconnect ? "on" : "off")")
        }
        let failure = BluejayError.disconnected(peripheral, reason: reason)
        runner.failAll(failure) { $0.kind == .gatt }
        ended.forEach { $0.end(with: failure) }
        handlers.forEach { $0(.failure(failure)) }
        onCallbackQueue { [self] in
            observers.forEach { $0.disconnected(from: peripheral) }
            let mode = handler?.didDisconnect(from: peripheral, with: error, willReconnect: disconnection.willReconnect)
            self.decideReconnection(to: peripheral, mode: mode, error: error)
        }
    }

    /// Applies the disconnect handler's answer and reconnects, or ends the listens.
    private func decideReconnection(to peripheral: PeripheralIdentifier, mode: AutoReconnectMode?, error: BluejayError?) {
        let decision = state.withLock { state -> (reconnect: Bool, gaveUp: Bool, timeout: Timeout, why: String) in
            let should = state.reconnect.apply(mode)
            guard should else { return (false, false, .none, "auto-reconnect is off") }
            guard state.lifecycle == .running else { return (false, false, .none, "Bluejay is stopped") }
            guard state.isBluetoothAvailable else { return (false, false, .none, "the controller is unavailable") }
            guard case .idle = state.link else { return (false, false, .none, "another connection was requested") }
            guard state.reconnect.mayReconnectAfterDisconnection else { return (false, true, .none, "its disconnect retries are used up") }
            state.reconnect.reconnectionStarts()
            return (true, false, state.lastTimeout, "")
        }
        broadcast(.disconnected(peripheral, error: error, willReconnect: decision.reconnect))
        if case let .change(value)? = mode { log(.info, "the disconnect handler set auto-reconnect \(value ? "on" : "off")") }
        guard decision.reconnect else {
            log(decision.gaveUp ? .warning : .info, "not reconnecting to \(peripheral): \(decision.why)")
            endAllListens(notifying: nil)
            saveRestoration(RestorationRecord())
            if decision.gaveUp { broadcast(.gaveUp(peripheral, error: error ?? .disconnected(peripheral, reason: nil))) }
            return
        }
        log(.info, "auto-reconnecting to \(peripheral)")
        broadcast(.reconnecting(peripheral))
        requestConnection(to: peripheral, timeout: decision.timeout, purpose: .reconnect, atFront: true) { _ in }
    }

    /// Disconnects (queued): waits for the requests before it, then disconnects. With
    /// `immediate`, every queued and running request fails with ``BluejayError/cancelled``
    /// first and a connection attempt in progress is abandoned.
    ///
    /// A successful disconnection is expected: ``shouldAutoReconnect`` becomes `false` and
    /// restoration state is cleared.
    public func disconnect(immediate: Bool = false, completion: (@Sendable (DisconnectionResult) -> Void)? = nil) {
        let deliver: @Sendable (Result<PeripheralIdentifier, BluejayError>) -> Void = onCallbackQueue { result in
            switch result {
            case let .success(peripheral): completion?(.disconnected(peripheral))
            case let .failure(error): completion?(.failure(error))
            }
        }
        guard hasStarted else {
            deliver(.failure(.notStarted))
            return
        }
        if immediate {
            cancelRequests(disconnecting: true, deliver: deliver)
        } else {
            submitDisconnection(atFront: false, deliver: deliver)
        }
    }

    /// Fails every queued and running request with ``BluejayError/cancelled`` and stops the
    /// scan; with `shouldDisconnect` (the default) also disconnects, or abandons a connection
    /// attempt, which turns ``shouldAutoReconnect`` off. Listens stay (their callbacks get
    /// the error with ``broadcastErrorsToListeners``).
    public func cancelEverything(shouldDisconnect: Bool = true) {
        guard hasStarted else { return }
        cancelRequests(disconnecting: shouldDisconnect) { _ in }
    }

    func cancelRequests(disconnecting: Bool, deliver: @escaping @Sendable (Result<PeripheralIdentifier, BluejayError>) -> Void) {
        let (scan, handlers, abandoned) = state.withLock { state -> (ScanSession?, [ListenHandler], PeripheralIdentifier?) in
            let listeners = state.listens.records.values.flatMap(\.listeners)
            var handlers = listeners.filter(\.isSynchronous).map(\.handler)
            if state.broadcastErrorsToListeners {
                handlers += listeners.filter { !$0.isSynchronous }.map(\.handler)
            }
            var abandoned: PeripheralIdentifier?
            if disconnecting, case let .connecting(peripheral, _) = state.link {
                abandoned = peripheral
                state.reconnect.attemptWasAbandonedOnRequest()
            }
            return (state.scan, handlers, abandoned)
        }
        log(.info, "cancelling everything\(disconnecting ? " and disconnecting" : ", staying connected")")
        scan?.requestStop(error: .cancelled)
        runner.failAll(.cancelled) { $0.kind != .scan }
        handlers.forEach { $0(.failure(.cancelled)) }
        guard disconnecting else { return }
        if let abandoned {
            log(.info, "the connection attempt to \(abandoned) was abandoned on request; auto-reconnect off")
            saveRestoration(RestorationRecord())
            deliver(.success(abandoned))
            return
        }
        submitDisconnection(atFront: true, deliver: deliver)
    }

    func submitDisconnection(atFront: Bool, id: UInt64? = nil, deliver: @escaping @Sendable (Result<PeripheralIdentifier, BluejayError>) -> Void) {
        let operation = QueuedOperation.make(id: id ?? runner.makeID(), name: "disconnect", kind: .disconnect, work: { [self] in
            try await self.performDisconnection()
        }, deliver: deliver)
        runner.submit(operation, atFront: atFront)
    }

    private func performDisconnection() async throws -> PeripheralIdentifier {
        let link = try state.withLock { state throws(BluejayError) -> PeripheralLink in
            guard state.lifecycle == .running else { throw .stopped }
            guard case let .connected(link) = state.link else { throw .notConnected }
            state.link = .disconnecting(link)
            state.reconnect.disconnectionWasRequested()
            return link
        }
        log(.info, "disconnecting from \(link.identifier) (an expected disconnection)")
        do {
            try await link.connection.disconnect(reason: .remoteUserTerminatedConnection)
        } catch {
            let failure = BluejayError(error, peripheral: link.identifier, operation: "disconnecting")
            if link.connection.isConnected {
                state.withLock { state in
                    if state.link.link === link { state.link = .connected(link) }
                    state.reconnect.requestedDisconnectionDidNotHappen()
                }
                throw failure
            }
        }
        // The host bounds this wait (supervision timeout); a cancelled wait leaves the
        // drop to the watcher `install` started.
        let reason = try await link.connection.waitForDisconnection()
        linkDidDrop(link, reason: reason)
        return link.identifier
    }
}

extension ConnectPurpose {
    var logDescription: String {
        switch self {
        case .request: return "requested"
        case .reconnect: return "auto-reconnect"
        case .restore: return "restoration"
        }
    }
}
