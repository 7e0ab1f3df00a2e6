import BluetoothBlueZ
import BluetoothHost
import BluetoothTransport
import Foundation

extension Bluejay {
    /// Starts Bluejay: opens the controller (or takes over a host) in the background and
    /// reports availability to the ``ConnectionObserver``s. Requests made before the
    /// controller is ready wait in the queue; if it cannot be used they fail with
    /// ``BluejayError/bluetoothUnavailable(_:)``.
    ///
    /// With `BackgroundRestoreMode/enable(_:)`, a connection the previous process left
    /// behind is restored first (see ``BackgroundRestoreConfig``).
    public func start(mode: StartMode = .new(.default)) {
        let options: StartOptions
        switch mode {
        case let .new(startOptions): options = startOptions
        case let .use(_, _, startOptions): options = startOptions
        }
        let generation = state.withLock { state -> UInt64? in
            guard state.lifecycle != .running else { return nil }
            var fresh = EngineState()
            fresh.connectionObservers = state.connectionObservers
            fresh.serviceObservers = state.serviceObservers
            fresh.rssiObservers = state.rssiObservers
            fresh.logObservers = state.logObservers
            fresh.disconnectHandler = state.disconnectHandler
            fresh.generation = state.generation + 1
            fresh.broadcastErrorsToListeners = state.broadcastErrorsToListeners
            fresh.defaultWarningOptions = state.defaultWarningOptions
            state = fresh
            state.lifecycle = .running
            state.options = options
            state.isBluetoothStateUpdateImminent = true
            state.unavailableReason = "the controller is starting"
            if case let .enable(config) = options.backgroundRestore {
                state.restoration = RestorationContext(
                    config: config, store: RestorationStore(directory: config.directory, restoreIdentifier: config.restoreIdentifier))
            }
            return state.generation
        }
        guard let generation else {
            log(.warning, "start(mode:) called while Bluejay is running; ignored")
            return
        }
        log(.info, "starting")
        Task { await self.bringUp(mode, generation: generation) }
    }

    /// ``start(mode:)`` and ``register(connectionObserver:)`` at once.
    public func start(mode: StartMode = .new(.default), connectionObserver: any ConnectionObserver) {
        register(connectionObserver: connectionObserver)
        start(mode: mode)
    }

    private func bringUp(_ mode: StartMode, generation: UInt64) async {
        let host: any CentralBackend
        var adopted: Connection?
        let owns: Bool
        do {
            switch mode {
            case let .new(options):
                host = try makeBackend(options)
                owns = true
            case let .use(existing, connection, _):
                host = existing
                adopted = connection
                owns = false
            }
            try await host.start()
        } catch {
            let failure = BluejayError(error)
            let (alert, current) = state.withLock { state in
                if state.generation == generation {
                    state.isBluetoothStateUpdateImminent = false
                    if case let .bluetoothUnavailable(why) = failure { state.unavailableReason = why } else { state.unavailableReason = "\(failure)" }
                }
                return (state.options.enableBluetoothAlert, state.generation == generation)
            }
            guard current else { return }
            log(alert ? .error : .warning, "the controller cannot be used: \(failure)")
            runner.resume()
            notifyAvailability(false)
            return
        }
        if let agent = state.withLock({ $0.pairingAgent }) { await host.setPairingAgent(agent) }
        let events = await host.backendEvents()
        let accepted = state.withLock { state -> Bool in
            guard state.generation == generation, state.lifecycle == .running else { return false }
            state.backend = host
            state.ownsHost = owns
            state.isBluetoothAvailable = true
            state.isBluetoothStateUpdateImminent = false
            state.unavailableReason = ""
            return true
        }
        guard accepted else {
            if owns { await host.shutdown() }
            return
        }
        let watcher = Task { [weak self] in
            for await event in events {
                switch event {
                case let .unavailable(reason): self?.backendBecameUnavailable(reason, generation: generation)
                case .available: self?.backendBecameAvailable(generation: generation)
                case let .identityResolved(connection, identity): self?.identityResolved(connection, identity)
                }
            }
        }
        state.withLock { $0.hostEvents = watcher }
        log(.info, "the controller is ready")
        notifyAvailability(true)
        if let adopted, adopted.isConnected {
            await adopt(adopted)
        }
        beginRestoration()
        runner.resume()
    }

    /// Opens what ``StartMode/new(_:)``'s options name: our host on a transport, or BlueZ.
    private func makeBackend(_ options: StartOptions) throws -> any CentralBackend {
        var configuration = options.hostConfiguration
        var backendLogger = logger
        backendLogger[metadataKey: "part"] = "host"
        switch try options.transport.backend() {
        case let .blueZ(adapter):
            backendLogger[metadataKey: "part"] = "bluez"
            return BlueZCentral(adapter: adapter, ioCapability: configuration.security.ioCapability, clock: configuration.clock,
                                logger: backendLogger)
        case let .transport(transport):
            do {
                if configuration.capture == nil { configuration.capture = try options.capture.open() }
            } catch {
                transport.close()
                throw error
            }
            return LEHost(transport: transport, configuration: configuration, logger: backendLogger)
        }
    }

    /// Takes over a connection made by someone else (``StartMode/use(host:peripheral:options:)``).
    private func adopt(_ connection: Connection) async {
        let identifier = PeripheralIdentifier(address: connection.peerIdentity)
        let (link, changes) = await prepareLink(connection, identifier: identifier)
        install(link, timeout: .none, changes: changes)
        log(.info, "using the existing connection to \(identifier)")
        announceConnection(identifier, mtu: link.mtu)
    }

    private func notifyAvailability(_ available: Bool) {
        let observers = state.withLock { $0.connectionObservers.live() }
        onCallbackQueue { observers.forEach { $0.bluetoothAvailable(available) } }
        broadcast(.bluetoothAvailable(available))
    }

    private func backendBecameUnavailable(_ reason: String, generation: UInt64) {
        let wasAvailable = state.withLock { state -> Bool in
            guard state.generation == generation, state.isBluetoothAvailable else { return false }
            state.isBluetoothAvailable = false
            state.unavailableReason = reason
            return true
        }
        guard wasAvailable else { return }
        log(.error, "the controller is gone: \(reason)")
        notifyAvailability(false)
    }

    /// BlueZ came back (bluetoothd restarted): usable again; auto-reconnect resumes from the
    /// disconnection the restart caused.
    private func backendBecameAvailable(generation: UInt64) {
        let becameAvailable = state.withLock { state -> Bool in
            guard state.generation == generation, state.lifecycle == .running, !state.isBluetoothAvailable else { return false }
            state.isBluetoothAvailable = true
            state.unavailableReason = ""
            return true
        }
        guard becameAvailable else { return }
        log(.notice, "the controller is usable again")
        notifyAvailability(true)
        runner.resume()
    }

    // MARK: Stopping

    /// Stops Bluejay: fails every request with ``BluejayError/stopped``, stops the scan,
    /// disconnects (an expected disconnection: restoration state is cleared) and closes the
    /// controller if Bluejay opened it. `completion` runs on the callback queue.
    public func stop(completion: (@Sendable () -> Void)? = nil) {
        Task {
            await self.stop()
            if let completion { self.onCallbackQueue(completion) }
        }
    }

    /// ``stop(completion:)``, awaiting the end.
    public func stop() async {
        guard let (host, owns, link, scan, listens) = tearDown() else { return }
        scan?.requestStop(error: .stopped)
        failListenHandlers(listens, with: .stopped)
        if let link {
            log(.info, "disconnecting from \(link.identifier) (expected: Bluejay is stopping)")
            try? await link.connection.disconnect(reason: .remoteUserTerminatedConnection)
        }
        if owns, let host { await host.shutdown() }
        saveRestoration(RestorationRecord())
        log(.info, "stopped")
        notifyAvailability(false)
    }

    /// Stops Bluejay without disconnecting and hands back the host and the connection, for
    /// other code to use (Bluejay's CoreBluetooth migration). Requests fail with
    /// ``BluejayError/stopped``; listens end (their notifications are turned off, so the new
    /// owner starts clean); restoration state is left as it is. ``start(mode:)`` with ``StartMode/use(host:peripheral:options:)``
    /// takes them back.
    public func stopAndExtractBluetoothState() -> (host: LEHost?, peripheral: Connection?) {
        guard let (backend, _, link, scan, listens) = tearDown() else { return (nil, nil) }
        let host = backend as? LEHost
        scan?.requestStop(error: .stopped)
        failListenHandlers(listens, with: .stopped)
        log(.info, "stopped; the host\(link.map { " and the connection to \($0.identifier)" } ?? "") handed over")
        return (host, link?.hostConnection)
    }

    /// Marks Bluejay stopped and collects what the caller must shut down.
    private func tearDown() -> ((any CentralBackend)?, Bool, PeripheralLink?, ScanSession?, [ListenRegistry.Record])? {
        let collected = state.withLock { state -> ((any CentralBackend)?, Bool, PeripheralLink?, ScanSession?, [ListenRegistry.Record], [Task<Void, Never>])? in
            guard state.lifecycle == .running else { return nil }
            state.lifecycle = .stopped
            state.generation += 1
            let link = state.link.link
            state.link = .idle
            let scan = state.scan
            state.scan = nil
            let listens = Array(state.listens.removeAll().values)
            listens.forEach { $0.subscription?.cancel() }
            let tasks = state.watchers + [state.hostEvents].compactMap { $0 }
            state.watchers = []
            state.hostEvents = nil
            state.isBluetoothAvailable = false
            state.isBluetoothStateUpdateImminent = false
            state.unavailableReason = "Bluejay was stopped"
            return (state.backend, state.ownsHost, link, scan, listens, tasks)
        }
        guard let (host, owns, link, scan, listens, tasks) = collected else { return nil }
        tasks.forEach { $0.cancel() }
        runner.failAll(.stopped)
        runner.suspend()
        return (host, owns, link, scan, listens)
    }
}
