import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import DequeModule
import Logging

/// A Bluetooth LE host on one controller: GAP (scan, connect), L2CAP fixed channels, ATT and
/// GATT for every connection. Several connections may be up at once, each with its own ATT
/// bearer.
///
/// ```swift
/// let host = LEHost(transport: try SystemTransports.open(.tcp(host: "127.0.0.1", port: 9000)))
/// try await host.powerOn()
/// for try await advertisement in try await host.scan() { ... }
/// let connection = try await host.connect(to: peer)
/// let services = try await connection.gatt.discoverAllPrimaryServices()
/// ```
public actor LEHost {
    public let controller: HCIController
    public nonisolated let configuration: HostConfiguration
    /// This device's GATT server, shared by every connection.
    public let server: GATTServer
    /// L2CAP: routes the controller's batches on its reader thread, ATT to the bearers.
    nonisolated let l2cap: L2CAPRouter
    let logger: Logger

    /// What the controller reported during ``powerOn()``.
    public internal(set) var controllerInfo: ControllerInfo?
    /// This device's identity address and where it came from, once powered on (see
    /// LEHost+Identity.swift): the public address, or a static random address on a
    /// controller without one.
    public internal(set) var identity: LocalIdentity?
    /// Set once the transport is gone.
    private(set) var transportClosure: TransportError?? = nil

    /// What the host knows of each link up, by connection handle (HostLink.swift).
    var links: [UInt16: HostLink] = [:]
    let eventListeners = AsyncStreamFanOut<HostEvent>()
    var nextIdentifier: UInt64 = 0
    private var inboundTask: Task<Void, Never>?

    // GAP central state (see LEHost+Scanning.swift and LEHost+Connecting.swift).
    var scanState: ScanState?
    /// The scan's LE Set Scan Enable (off) while it is on its way (LEHost+Scanning.swift).
    var scanDisable: Task<Void, Never>?
    var pendingConnection: PendingConnection?
    /// Answers of attempts the controller ended before their callers came back to collect them
    /// (the LE Connection Complete handled between LE Create Connection's Command Status and
    /// the caller's resumption), by attempt.
    var unclaimedConnectionAnswers: [UInt64: Result<Connection, HostError>] = [:]
    /// The attempt whose turn it is in the controller, and those waiting for theirs.
    var connectTurn: UInt64?
    var connectQueue: Deque<QueuedConnect> = []
    // GAP peripheral state (see LEHost+Advertising.swift).
    var advertising = AdvertisingState()
    /// Extended advertising sets (LEHost+AdvertisingSets.swift).
    var advertisingSetsState = AdvertisingSetsState()
    let advertisingSetTerminationListeners = AsyncStreamFanOut<AdvertisingSetTermination>()
    /// The controller's initialization after a hardware error, while it runs (see
    /// LEHost+ControllerRecovery.swift).
    var controllerRecovery: Task<Void, Never>?
    // Security Manager state (see SMP/LEHost+SecurityManager.swift).
    var pairingAgent: any PairingAgent = DefaultPairingAgent()
    var pairingAttempts = PairingAttempts()
    /// The latest bond being written to the store.
    var pendingBondSave: Task<Void, Never>?
    /// The store's revision when ``bondedPeers`` and the resolver's IRKs were loaded from it.
    var loadedBondRevision: UInt64?
    /// The GATT database cache and the peers trusted to keep their database (LEHost+GATTCache.swift).
    let gattCaching: GATTCaching
    /// Out-of-band pairing data: this device's, and the peers' by address.
    var localOutOfBand: LocalOutOfBand?
    var peerOutOfBand: [BluetoothAddress: OutOfBandData] = [:]
    /// LE legacy OOB: this device's TK (``makeLegacyOutOfBandData()``) and the peers'.
    var localLegacyOutOfBand: LegacyOutOfBandData?
    var peerLegacyOutOfBand: [BluetoothAddress: LegacyOutOfBandData] = [:]
    /// One read-modify-write of a stored bond at a time: a signed write's counter reservation or
    /// check (SMP/LEHost+Signing.swift), the GATT server's client state (LEHost+BondedClientState.swift).
    nonisolated let signingGate = AsyncSerialGate()
    /// The identities of bonded peers, for the GATT server's synchronous "has a key" check.
    nonisolated let bondedPeers = BondedPeers()
    /// The controller's random address: the static identity on a controller without a public
    /// address, or the one set with ``setRandomAddress(_:)``; `nil` while none was set.
    var randomAddress: BluetoothAddress?
    /// Where a generated static identity address is kept (``HostConfiguration/staticAddressStore``).
    nonisolated let staticAddressStore: any StaticAddressStore
    /// Resolves bonded peers' private addresses to their identities (SMP/Privacy/).
    public nonisolated let addressResolver = AddressResolver()
    /// This device's IRK, distributed with its identity when bonding.
    nonisolated let localIdentityResolvingKey: UInt128
    /// This device's private addresses while privacy is on (GAP/LEHost+Privacy.swift).
    var addressRotation: LocalAddressRotation?
    var addressRotationTimer: Task<Void, Never>?
    /// The scan settings of the host's scan for a connection attempt that listens for its peer
    /// (GAP/LEHost+Connecting.swift).
    var connectionScanOptions: ScanOptions?
    /// The controller's resolving list, on a controller with LL Privacy (SMP/LEHost+ResolvingList.swift).
    var resolvingList: ResolvingListState?
    /// Address changes one at a time, and none while advertising, scanning or initiating
    /// starts or stops (GAP/LEHost+AddressChanges.swift).
    nonisolated let addressingGate = AsyncSerialGate()

    public init(transport: any HCITransport, configuration: HostConfiguration = HostConfiguration(),
                logger: Logger = Logger(label: "bluejay.host")) {
        self.configuration = configuration
        self.logger = logger
        gattCaching = GATTCaching(configuration: configuration, logger: logger)
        staticAddressStore = configuration.staticAddressStore
            ?? (configuration.bondStore as? FileBondStore).map { FileStaticAddressStore(directory: $0.directory, logger: logger) }
            ?? InMemoryStaticAddressStore()
        localIdentityResolvingKey = configuration.identityResolvingKey ?? UInt128.random(in: 1...UInt128.max)
        var hciLogger = logger
        hciLogger[metadataKey: "layer"] = "hci"
        let transport = configuration.capture.map { CapturingTransport(transport, capture: $0) } ?? transport
        let controller = HCIController(transport: transport, commandTimeout: configuration.commandTimeout, clock: configuration.clock,
                                       coalescingWindow: configuration.receiveCoalescingWindow, limits: configuration.limits.hci,
                                       logger: hciLogger)
        self.controller = controller
        var serverLogger = logger
        serverLogger[metadataKey: "layer"] = "gatt-server"
        // The server answers through each connection's ATT bearer (the router frames it); every
        // link of this host has one, so nothing is sent through this sender.
        let droppedLogger = serverLogger
        let server = GATTServer(preferredMTU: configuration.preferredATTMTU, clock: configuration.clock, logger: serverLogger) { handle, _, completion in
            droppedLogger.warning("an ATT PDU for connection \(Hex.format(handle)), which has no ATT bearer, was dropped")
            completion?(.failure(.connectionClosed(connectionHandle: handle)))
        }
        self.server = server
        var l2capLogger = logger
        l2capLogger[metadataKey: "layer"] = "l2cap"
        l2cap = L2CAPRouter(controller: controller, server: server,
                            settings: .init(transactionTimeout: configuration.attTransactionTimeout, clock: configuration.clock),
                            queueLimits: .init(peerItems: configuration.limits.queuedPeerPDUs, allItems: configuration.limits.queuedControllerEvents),
                            logger: l2capLogger)
    }

    /// Starts the transport and initializes the controller. Calling it again returns the same
    /// information without resetting the controller.
    @discardableResult
    public func powerOn() async throws -> ControllerInfo {
        if let controllerInfo { return controllerInfo }
        if let closure = transportClosure { throw HostError.transportClosed(closure) }
        if inboundTask == nil {
            // Named before any central can connect and read the GAP Device Name.
            await server.setDeviceName(configuration.deviceName)
            let l2cap = self.l2cap
            controller.start(receiver: { batch in l2cap.process(batch) })
            let items = l2cap.hostItems
            inboundTask = Task { await self.process(items) }
        }
        do {
            let info = try await controller.initialize()
            let identity = try await establishIdentity(info)
            controllerInfo = info
            self.identity = identity
            await loadBondedPeers()
            try await startPrivacy(info)
            logger.info("controller ready, identity \(identity): LE ACL \(info.aclBufferCount) x \(info.aclDataLength) bytes, \(info.commandFamily)")
            logControllerAdaptations(info, identity: identity)
            return info
        } catch {
            throw HostError.wrap(error)
        }
    }

    /// Leaves the controller as it found it (best effort): stops scanning (waiting for a stop
    /// already under way) and advertising, removes the advertising sets and disconnects every
    /// connection. Then closes the transport and the capture (``HostConfiguration/capture``).
    ///
    /// Each step is bounded by the command timeout, and what the controller did not confirm is
    /// logged. The steps run even when the caller's task is cancelled (Ctrl-C), since a real
    /// adapter left scanning or advertising keeps doing it after the process is gone.
    public func shutdown() async {
        await Task { await self.leaveControllerClean() }.value
        addressRotationTimer?.cancel()
        controller.close()
        await inboundTask?.value
        // Bonds made just before are written before the host is gone.
        await pendingBondSave?.value
        configuration.capture?.close()
    }

    private func leaveControllerClean() async {
        guard transportClosure == nil, controllerInfo != nil else { return }
        // A stop begun elsewhere (a scan stream's consumer went away) is waited for too.
        await stopScanning()
        await waitForScanDisable()
        do {
            try await stopAdvertising()
            try await stopAllAdvertisingSets()
        } catch {
            logger.warning("shutdown: advertising may still be on: \(error)")
        }
        // All at once: each waits up to its supervision timeout for the controller's report
        // (one that reset reports none), so one after another the waits would add up.
        await withTaskGroup(of: Void.self) { group in
            for connection in links.values.map(\.connection) {
                group.addTask {
                    do {
                        try await self.disconnect(connection, reason: .remoteDeviceTerminatedPowerOff)
                    } catch {
                        self.logger.warning("shutdown: \(connection.peer) may still be connected: \(error)")
                    }
                }
            }
        }
    }

    /// The connections that are up.
    public var connections: [Connection] { links.values.map(\.connection).sorted { $0.handle < $1.handle } }

    /// A new stream of host events; it ends when the transport closes.
    public func events() -> AsyncStream<HostEvent> {
        guard let closure = transportClosure else { return eventListeners.makeStream() }
        // A late listener still learns why nothing more will come.
        let (stream, continuation) = AsyncStream.makeStream(of: HostEvent.self)
        continuation.yield(.transportClosed(closure))
        continuation.finish()
        return stream
    }

    func broadcast(_ event: HostEvent) {
        eventListeners.yield(event)
    }

    func makeIdentifier() -> UInt64 {
        nextIdentifier += 1
        return nextIdentifier
    }

    func requirePoweredOn() throws(HostError) {
        if let closure = transportClosure { throw .transportClosed(closure) }
        guard controllerInfo != nil else { throw .notPoweredOn }
    }

    /// Sends an HCI command, mapping failures to ``HostError``. A command the controller
    /// answers Unknown HCI Command is noted in ``controllerInfo`` (logged once): the host does
    /// not send it again where it can do without (``requireCommand(_:listedAs:)``).
    func send<Command: HCICommand>(_ command: Command) async throws(HostError) -> Command.ReturnParameters {
        do {
            return try await controller.send(command)
        } catch HCIError.commandFailed(let opcode, .unknownCommand) {
            if controllerInfo?.unknownCommands.insert(opcode).inserted == true {
                logger.notice("controller: \(ControllerAdaptation.unknownCommand(opcode))")
            }
            throw HostError.hci(.commandFailed(opcode, .unknownCommand))
        } catch {
            throw HostError.wrap(error)
        }
    }

    /// Throws, without sending it, what the controller answers a command it does not have:
    /// Unknown HCI Command, when it does not list the command (`bit`) or answered it so before.
    func requireCommand<Command: HCICommand>(_ command: Command.Type, listedAs bit: SupportedCommands.Command) throws(HostError) {
        guard controllerInfo?.supports(command, listedAs: bit) ?? true else {
            throw .hci(.commandFailed(Command.opcode, .unknownCommand))
        }
    }

    // MARK: Inbound

    /// The control plane: events, signalling and SMP, one batch of the controller at a time
    /// (ATT was routed on the transport's thread already).
    private func process(_ batches: AsyncStream<[L2CAPRouter.HostItem]>) async {
        for await batch in batches {
            for item in batch {
                switch item {
                case let .event(event): handle(event)
                case let .connected(completion): didComplete(connection: completion)
                case let .signaling(handle, payload): connection(handle).map { receiveSignaling(payload, on: $0) }
                case let .securityManager(handle, payload): connection(handle).map { receiveSecurityManager(payload, on: $0) }
                // Not awaited here: the disconnection completes through this loop.
                case let .attTransactionTimeout(bearer): Task { await self.disconnectAfterATTTimeout(of: bearer) }
                case let .transportClosed(reason): transportDidClose(reason)
                case let .barrier(continuation): continuation.resume()
                }
            }
            l2cap.didHandle(batch)
        }
    }

    private func handle(_ event: HCIEvent) {
        switch event {
        case let .disconnectionComplete(disconnection):
            didDisconnect(disconnection)
        case let .le(event):
            handle(event)
        case let .hardwareError(error):
            logger.error("controller hardware error \(Hex.format(error.hardwareCode))")
            broadcast(.hardwareError(code: error.hardwareCode))
            beginControllerRecovery(hardwareCode: error.hardwareCode)
        case let .encryptionChange(change):
            encryptionChanged(handle: change.connectionHandle, status: change.status, enabled: change.encryptionEnabled.isEncrypted,
                              keySize: nil)
        case let .encryptionChangeV2(change):
            encryptionChanged(handle: change.connectionHandle, status: change.status, enabled: change.encryptionEnabled.isEncrypted,
                              keySize: Int(change.encryptionKeySize))
        case let .encryptionKeyRefreshComplete(refresh):
            encryptionChanged(handle: refresh.connectionHandle, status: refresh.status, enabled: true, keySize: nil)
        case let .dataBufferOverflow(overflow):
            logger.error("controller reports a data buffer overflow: \(overflow)")
        default:
            logger.debug("event not handled by the host: \(event)")
        }
    }

    private func handle(_ event: HCILEMetaEvent) {
        switch event {
        // Failed connection events only: a successful one comes with its link (HostItem.connected).
        case let .connectionComplete(complete):
            didComplete(connection: .init(complete))
        case let .enhancedConnectionComplete(complete):
            didComplete(connection: .init(complete))
        case let .enhancedConnectionCompleteV2(complete):
            didComplete(connection: .init(complete))
        case let .connectionUpdateComplete(update):
            didUpdateConnection(update)
        case let .dataLengthChange(change):
            didChangeDataLength(change)
        case let .phyUpdateComplete(update):
            didUpdatePHY(update)
        case let .remoteConnectionParameterRequest(request):
            answer(request)
        case let .longTermKeyRequest(request):
            answer(request)
        case let .advertisingSetTerminated(termination):
            advertisingSetDidTerminate(termination)
        default:
            logger.debug("LE event not handled by the host: \(event)")
        }
    }

    private func transportDidClose(_ reason: TransportError?) {
        guard transportClosure == nil else { return }
        transportClosure = .some(reason)
        logger.log(level: reason == nil ? .info : .error, "transport closed\(reason.map { ": \($0)" } ?? "")")
        failScan(with: .transportClosed(reason))
        failPendingConnection(with: .transportClosed(reason))
        let ended = links.values.sorted { $0.connection.handle < $1.connection.handle }
        links.removeAll()
        for link in ended {
            endLink(link, error: .transportClosed(reason), reason: .hardwareFailure)
            broadcast(.disconnected(link.connection, reason: .hardwareFailure))
        }
        server.close()
        broadcast(.transportClosed(reason))
        eventListeners.finish()
        advertisingSetTerminationListeners.finish()
    }
}
