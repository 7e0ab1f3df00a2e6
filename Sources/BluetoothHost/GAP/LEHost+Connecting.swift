import BluetoothCore
import BluetoothHCI

/// The three LE connection complete events, reduced to what the host uses.
struct ConnectionCompletion: Sendable {
    var status: HCIStatus
    var handle: UInt16
    var role: ConnectionRole
    var peer: DeviceAddress
    var parameters: ConnectionParameters
    /// The resolvable private address the controller made for this device, if it did.
    var localPrivateAddress: BluetoothAddress = .zero
    /// The peer's identity, when the controller resolved its private address with the
    /// resolving list.
    var resolvedIdentity: DeviceAddress?
    /// The link the router opened for the event, on the transport's reader thread (successful
    /// events only).
    var link: L2CAPLink?

    init(_ event: LEConnectionCompleteEvent) {
        self.init(status: event.status, handle: event.connectionHandle, role: event.role, peer: event.peer,
                  interval: event.connectionInterval, latency: event.peripheralLatency, timeout: event.supervisionTimeout)
    }

    init(_ event: LEEnhancedConnectionCompleteEvent) {
        self.init(status: event.status, handle: event.connectionHandle, role: event.role,
                  peer: Self.overTheAir(event.peer, resolvedFrom: event.peerResolvablePrivateAddress),
                  interval: event.connectionInterval, latency: event.peripheralLatency, timeout: event.supervisionTimeout)
        localPrivateAddress = event.localResolvablePrivateAddress
        resolvedIdentity = Self.identity(event.peer, resolvedFrom: event.peerResolvablePrivateAddress)
    }

    init(_ event: LEEnhancedConnectionCompleteV2Event) {
        self.init(status: event.status, handle: event.connectionHandle, role: event.role,
                  peer: Self.overTheAir(event.peer, resolvedFrom: event.peerResolvablePrivateAddress),
                  interval: event.connectionInterval, latency: event.peripheralLatency, timeout: event.supervisionTimeout)
        localPrivateAddress = event.localResolvablePrivateAddress
        resolvedIdentity = Self.identity(event.peer, resolvedFrom: event.peerResolvablePrivateAddress)
    }

    /// The address the peer connected from. A controller that resolved it reports the identity
    /// (type 0x02 or 0x03) and the private address apart (Core 6.0, Vol 4, Part E, 7.7.65.10);
    /// the host keeps the private one, which SMP's c1 and f5 take, and the identity beside it.
    /// With no private address reported, the identity itself was used. A private address
    /// beside type 0x00 or 0x01 counts too: Rootcanal 1.10.0 reports a peer it resolved so.
    private static func overTheAir(_ peer: DeviceAddress, resolvedFrom privateAddress: BluetoothAddress) -> DeviceAddress {
        guard privateAddress != .zero else { return DeviceAddress(peer.address, type: peer.type.base) }
        return DeviceAddress(privateAddress, type: .random)
    }

    /// The identity the controller resolved the peer's private address to, if it did.
    private static func identity(_ peer: DeviceAddress, resolvedFrom privateAddress: BluetoothAddress) -> DeviceAddress? {
        privateAddress == .zero ? nil : DeviceAddress(peer.address, type: peer.type.base)
    }

    private init(status: HCIStatus, handle: UInt16, role: ConnectionRole, peer: DeviceAddress, interval: UInt16, latency: UInt16, timeout: UInt16) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peer = peer
        parameters = ConnectionParameters(interval: interval, peripheralLatency: latency, supervisionTimeout: timeout)
    }
}

/// The connection attempt this host runs as a central. The controller runs one LE Create
/// Connection at a time (Core 6.0, Vol 4, Part E, 7.8.12), so there is at most one; later
/// attempts wait for their turn in ``LEHost/connectQueue``.
struct PendingConnection: Sendable {
    let id: UInt64
    let peer: DeviceAddress
    /// The caller, while it waits for the answer.
    var caller: CheckedContinuation<Connection, any Error>?
    /// An answer given before the caller started waiting for it.
    var earlyAnswer: Result<Connection, HostError>?
    var isAnswered = false
    /// The controller accepted LE Create Connection and is trying.
    var isInitiating = false
    /// Why the caller gave up (timeout or cancellation). The attempt stays until the
    /// controller reports its end, so that the next one is not refused.
    var abandonment: HostError?
    /// Ends the attempt should the controller never report it after LE Create Connection Cancel.
    var endGuard: Task<Void, Never>?
    /// The attempt waits to hear a bonded peer that the controller cannot resolve
    /// (``LEHost/connect(to:request:timeout:)``).
    var sighting: PendingSighting?
}

/// A connection attempt listening for its peer's advertising: the resolver's watch and the
/// caller's wait.
struct PendingSighting: Sendable {
    let watch: UInt64
    let continuation: CheckedContinuation<DeviceAddress, any Error>
}

/// A connect call waiting for the controller to finish the attempt before it.
struct QueuedConnect: Sendable {
    let id: UInt64
    let continuation: CheckedContinuation<Void, any Error>
}

extension LEHost {
    /// Whether a ``connect(to:request:timeout:)`` call is waiting for a connection the
    /// controller is trying to make (it accepted LE Create Connection).
    public var isConnecting: Bool {
        guard let pending = pendingConnection else { return false }
        return pending.isInitiating && !pending.isAnswered
    }

    /// Connects to a peripheral as the central and returns once the link is up and ready
    /// (ATT MTU exchanged, longest data length requested).
    ///
    /// `peer` may be a bonded peer's identity address, also one that advertises from private
    /// addresses and was never heard since the host started: when the controller resolves its
    /// addresses (its resolving list, see ``controllerResolvedIdentities``), LE Create Connection
    /// names the identity with address type 0x02 or 0x03 and the controller finds the peer at
    /// whatever private address it uses; otherwise the host scans (passively) until it hears
    /// an address the bond's IRK resolves (or, outside network privacy mode, the identity
    /// address itself), then connects to that address. An app's scan running meanwhile serves
    /// as well.
    ///
    /// - Parameters:
    ///   - request: the connection parameters and scan settings to ask the controller for.
    ///   - peer: the peripheral's address and its type.
    ///   - timeout: how long to try, waiting for an earlier attempt included; `nil`
    ///     tries until cancelled. On timeout the caller gets ``HostError/connectionTimeout(_:)``
    ///     at once, and the attempt is cancelled in the controller.
    /// Cancelling the calling task gives up the same way, with ``HostError/cancelled``.
    /// Connection requests wait for each other: the controller creates one at a time.
    public func connect(to peer: DeviceAddress, request: ConnectionRequest = ConnectionRequest(), timeout: Duration? = .seconds(30)) async throws -> Connection {
        try requirePoweredOn()
        let id = makeIdentifier()
        let clock = configuration.clock
        let timer = timeout.map { limit in
            let deadline = clock.now + limit
            return Task { [weak self] in
                do { try await clock.sleep(until: deadline) } catch { return }
                await self?.giveUp(id, reason: .connectionTimeout(peer))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await attemptConnection(id: id, to: peer, request: request)
        } onCancel: {
            Task { await self.giveUp(id, reason: .cancelled) }
        }
    }

    private func attemptConnection(id: UInt64, to peer: DeviceAddress, request: ConnectionRequest) async throws -> Connection {
        if Task.isCancelled { throw HostError.cancelled }
        try await waitForTurn(id)
        await waitForControllerRecovery()
        pendingConnection = PendingConnection(id: id, peer: peer)
        do {
            let target = try await connectionTarget(for: peer, request: request, attempt: id)
            try await withAddressingGate { try await sendCreateConnection(to: target, request: request) }
        } catch {
            let abandonment = pendingConnection?.abandonment
            endAttempt(id)
            unclaimedConnectionAnswers[id] = nil
            if let abandonment { throw abandonment }
            if case let HostError.hci(.commandFailed(_, status)) = error { throw HostError.connectionFailed(peer, status) }
            throw error
        }
        // The attempt may have ended already (its LE Connection Complete was handled while this
        // task waited to resume); then `pendingConnection` is another attempt's, or none.
        if pendingConnection?.id == id {
            pendingConnection?.isInitiating = true
            if pendingConnection?.abandonment != nil {
                // Given up while the command was on its way.
                Task.detached { await self.cancelInController(id) }
            }
        }
        let connection = try await waitForAnswer(id)
        await prepare(connection)
        return connection
    }

    /// Where LE Create Connection goes for `peer`: a bonded identity the controller resolves as
    /// itself with the resolved address types (0x02, 0x03: Core 6.0, Vol 4, Part E, 7.8.12;
    /// LE Extended Create Connection takes it as 0x00/0x01, see ``sendCreateConnection(to:request:)``);
    /// a bonded identity with an IRK that it does not, at the address the host hears it at
    /// (``awaitSighting(of:request:attempt:)``); anything else as it is.
    private func connectionTarget(for peer: DeviceAddress, request: ConnectionRequest, attempt id: UInt64) async throws -> DeviceAddress {
        let identity = DeviceAddress(peer.address, type: peer.type.base)
        let isIdentity = peer.type != .random || peer.address.isStaticRandom
        guard isIdentity else { return peer }
        if controllerResolves(identity) {
            logger.debug("connecting to \(identity) through the controller's resolving list")
            return DeviceAddress(identity.address, type: identity.type == .public ? .publicIdentity : .randomIdentity)
        }
        guard addressResolver.hasKey(for: identity) else { return identity }
        let address = try await awaitSighting(of: identity, request: request, attempt: id)
        if address != identity { logger.debug("connecting to \(identity) at its private address \(address)") }
        return address
    }

    /// Listens for a bonded peer's advertising (Linux connects to a peer that uses private
    /// addresses the same way when the controller cannot resolve them: its filter accept list
    /// would compare addresses over the air, which the peer changes) and returns the address
    /// it was heard at: through the app's scan when one runs, else a passive scan of the
    /// host's own, ended before LE Create Connection.
    private func awaitSighting(of identity: DeviceAddress, request: ConnectionRequest, attempt id: UInt64) async throws -> DeviceAddress {
        let acceptsIdentityAddress = configuration.privacy.peerPrivacyMode == .device
        logger.info("connecting to \(identity): listening for its advertising, its private addresses resolved in the host")
        let address: DeviceAddress
        do {
            address = try await listen(for: identity, acceptingIdentityAddress: acceptsIdentityAddress, request: request, attempt: id)
        } catch {
            await endConnectionScan()
            throw error
        }
        // Scanning ends before initiating starts.
        await endConnectionScan()
        return address
    }

    private func listen(for identity: DeviceAddress, acceptingIdentityAddress acceptsIdentityAddress: Bool, request: ConnectionRequest,
                        attempt id: UInt64) async throws -> DeviceAddress {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DeviceAddress, any Error>) in
            guard let pending = pendingConnection, pending.id == id, pending.abandonment == nil else {
                continuation.resume(throwing: pendingConnection?.abandonment ?? HostError.cancelled)
                return
            }
            let watch = addressResolver.watch(for: identity, acceptingIdentityAddress: acceptsIdentityAddress) { address in
                Task { await self.heard(identity, at: address, attempt: id) }
            }
            pendingConnection?.sighting = PendingSighting(watch: watch, continuation: continuation)
            connectionScanOptions = ScanOptions(active: false, filterDuplicates: true)
            connectionScanOptions?.interval = request.scanInterval
            connectionScanOptions?.window = request.scanWindow
            ensureConnectionScan()
        }
    }

    /// The attempt's peer was heard at `address`.
    private func heard(_ identity: DeviceAddress, at address: DeviceAddress, attempt id: UInt64) {
        guard let sighting = pendingConnection?.sighting, pendingConnection?.id == id else { return }
        pendingConnection?.sighting = nil
        addressResolver.stopWatching(sighting.watch)
        sighting.continuation.resume(returning: address)
    }

    /// Ends a waiting sighting with `error`.
    private func failSighting(_ error: HostError) {
        guard let sighting = pendingConnection?.sighting else { return }
        pendingConnection?.sighting = nil
        addressResolver.stopWatching(sighting.watch)
        sighting.continuation.resume(throwing: error)
    }

    /// Starts the host's scan for a connection attempt listening for its peer, unless a scan
    /// runs (the app's serves as well).
    private func ensureConnectionScan() {
        guard pendingConnection?.sighting != nil, scanState == nil, let options = connectionScanOptions else { return }
        Task {
            do {
                _ = try await self.startScan(options, forConnection: true, handler: { _ in }, onEnd: { _ in })
                // The sighting may have come, or the attempt ended, while the scan started.
                if self.pendingConnection?.sighting == nil { await self.endConnectionScan() }
            } catch HostError.scanInProgress {
                // The app's scan came first; the attempt hears its peer through it.
            } catch {
                self.logger.warning("scanning for a connection attempt failed: \(error)")
                self.failSighting(HostError.wrap(error))
            }
        }
    }

    /// A scan ended: an attempt still listening needs one of its own.
    func scanDidEnd() {
        ensureConnectionScan()
    }

    /// Ends the host's scan for a connection attempt, if it runs.
    private func endConnectionScan() async {
        guard let scan = scanState, scan.isForConnection, pendingConnection?.sighting == nil else { return }
        connectionScanOptions = nil
        await endScan(id: scan.receiver.id)
    }

    /// Waits until no other attempt runs in the controller; throws why the caller gave up if it
    /// did meanwhile.
    private func waitForTurn(_ id: UInt64) async throws {
        guard connectTurn != nil else {
            connectTurn = id
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            connectQueue.append(QueuedConnect(id: id, continuation: continuation))
        }
    }

    private func sendCreateConnection(to peer: DeviceAddress, request: ConnectionRequest) async throws(HostError) {
        let ownAddressType = ownAddressTypeForScanningAndConnecting
        if controllerInfo?.commandFamily == .extended {
            let phy = LEExtendedCreateConnectionCommand.PHYParameters(
                scanInterval: request.scanInterval, scanWindow: request.scanWindow,
                connectionIntervalMin: request.intervalRange.lowerBound, connectionIntervalMax: request.intervalRange.upperBound,
                maxLatency: request.peripheralLatency, supervisionTimeout: request.supervisionTimeout)
            // LE Extended Create Connection has no resolved address types: 0x00 and 0x01 name an
            // identity too, which the controller finds through its resolving list (Core 6.0,
            // Vol 4, Part E, 7.8.66; Rootcanal takes 0x03 for a public address).
            _ = try await send(LEExtendedCreateConnectionCommand(
                ownAddressType: ownAddressType, peerAddressType: peer.type.base, peerAddress: peer.address, le1M: phy))
        } else {
            _ = try await send(LECreateConnectionCommand(
                scanInterval: request.scanInterval, scanWindow: request.scanWindow,
                peerAddressType: peer.type, peerAddress: peer.address, ownAddressType: ownAddressType,
                connectionIntervalMin: request.intervalRange.lowerBound, connectionIntervalMax: request.intervalRange.upperBound,
                maxLatency: request.peripheralLatency, supervisionTimeout: request.supervisionTimeout))
        }
    }

    private func waitForAnswer(_ id: UInt64) async throws -> Connection {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Connection, any Error>) in
            if let outcome = unclaimedConnectionAnswers.removeValue(forKey: id) {
                continuation.resume(with: outcome.mapError { $0 as any Error })
                return
            }
            guard var pending = pendingConnection, pending.id == id else {
                continuation.resume(throwing: HostError.cancelled)
                return
            }
            if let early = pending.earlyAnswer {
                pending.earlyAnswer = nil
                pendingConnection = pending
                continuation.resume(with: early.mapError { $0 as any Error })
                return
            }
            pending.caller = continuation
            pendingConnection = pending
        }
    }

    /// Answers the caller of attempt `id` once (later answers are ignored).
    func answer(_ id: UInt64, with outcome: Result<Connection, HostError>) {
        guard var pending = pendingConnection, pending.id == id, !pending.isAnswered else { return }
        pending.isAnswered = true
        let caller = pending.caller
        pending.caller = nil
        if caller == nil { pending.earlyAnswer = outcome }
        pendingConnection = pending
        caller?.resume(with: outcome.mapError { $0 as any Error })
    }

    /// The caller gave up (timeout or cancellation): it hears `reason` now, and the controller
    /// is told to stop trying. An attempt still waiting for its turn just leaves the line.
    private func giveUp(_ id: UInt64, reason: HostError) async {
        if let index = connectQueue.firstIndex(where: { $0.id == id }) {
            connectQueue.remove(at: index).continuation.resume(throwing: reason)
            return
        }
        guard var pending = pendingConnection, pending.id == id, !pending.isAnswered else { return }
        pending.abandonment = reason
        pendingConnection = pending
        logger.info("giving up connecting to \(pending.peer): \(reason)")
        failSighting(reason)
        answer(id, with: .failure(reason))
        // In a task of its own: the caller, answered, cancels the task this runs in (its timer),
        // and the controller must be told all the same. Detached, so that no operation scope
        // of the caller's aborts it either.
        if pending.isInitiating { Task.detached { await self.cancelInController(id) } }
    }

    /// LE Create Connection Cancel. The controller then owes an LE Connection Complete: Unknown
    /// Connection Identifier, or success when the link won the race (Core 6.0, Vol 4, Part E,
    /// 7.8.13); that event ends the attempt.
    private func cancelInController(_ id: UInt64) async {
        do {
            _ = try await controller.send(LECreateConnectionCancelCommand())
        } catch {
            // Command Disallowed: the attempt ended meanwhile, and its event ends it here too.
            // Any other failure (a timeout): the guard below still ends it.
            logger.debug("LE Create Connection Cancel: \(error)")
        }
        guard pendingConnection?.id == id else { return }
        // Should the controller never report the end, later attempts must not wait for ever.
        let clock = configuration.clock
        let limit = configuration.commandTimeout
        pendingConnection?.endGuard = Task { [weak self] in
            do { try await clock.sleep(for: limit) } catch { return }
            await self?.controllerNeverEnded(id)
        }
    }

    private func controllerNeverEnded(_ id: UInt64) {
        guard pendingConnection?.id == id else { return }
        logger.warning("the controller did not report the end of a cancelled connection attempt within \(configuration.commandTimeout)")
        endAttempt(id)
    }

    /// The controller is done with attempt `id`: the next one may start.
    func endAttempt(_ id: UInt64) {
        guard let pending = pendingConnection, pending.id == id else { return }
        pending.endGuard?.cancel()
        failSighting(pending.abandonment ?? .cancelled)
        pendingConnection = nil
        if !pending.isAnswered { pending.caller?.resume(throwing: pending.abandonment ?? HostError.cancelled) }
        // Kept for the caller, which has not come back for it yet (``waitForAnswer(_:)``).
        if let early = pending.earlyAnswer { unclaimedConnectionAnswers[id] = early }
        if connectQueue.isEmpty {
            connectTurn = nil
            Task { await self.endConnectionScan() }
            addressingBlockerEnded()
        } else {
            let next = connectQueue.removeFirst()
            connectTurn = next.id
            next.continuation.resume()
        }
    }

    /// The transport is gone: the attempt and every waiting one fail with `error`.
    func failPendingConnection(with error: HostError) {
        if let pending = pendingConnection {
            answer(pending.id, with: .failure(error))
            endAttempt(pending.id)
        }
        let waiting = connectQueue
        connectQueue.removeAll()
        connectTurn = nil
        waiting.forEach { $0.continuation.resume(throwing: error) }
    }

    /// An LE (Enhanced) Connection Complete event.
    func didComplete(connection completion: ConnectionCompletion) {
        if completion.role == .central, let pending = pendingConnection {
            if completion.status.isSuccess {
                let connection = establish(completion)
                if pending.isAnswered {
                    // The link came up as the caller gave up: keep the caller's decision.
                    Task { try? await disconnect(connection, reason: .remoteUserTerminatedConnection) }
                } else {
                    answer(pending.id, with: .success(connection))
                }
            } else {
                answer(pending.id, with: .failure(pending.abandonment ?? .connectionFailed(pending.peer, completion.status)))
            }
            endAttempt(pending.id)
            return
        }
        guard completion.status.isSuccess else {
            logger.info("incoming connection failed: \(completion.status)")
            return
        }
        let connection = establish(completion)
        if completion.role == .peripheral { advertisingDidConnect(connection) }
    }

    private func establish(_ completion: ConnectionCompletion) -> Connection {
        let handle = completion.handle
        if let stale = links.removeValue(forKey: handle) {
            // The controller never reported that link's end (a lost Disconnection Complete):
            // it ends here, so that its callers are answered rather than left to the new link.
            logger.warning("a new link on handle \(Hex.format(handle)) while \(stale.connection.peer)'s was still up here: ending that one")
            addressResolver.linkEnded(at: stale.connection.peer)
            endLink(stale, error: .disconnected(reason: .connectionTimeout), reason: .connectionTimeout)
            broadcast(.disconnected(stale.connection, reason: .connectionTimeout))
        }
        // The router opens a link for every successful connection event (HostItem.connected);
        // a completion without one is a broken invariant, met with a link that carries nothing.
        let link = completion.link
            ?? L2CAPLink.closed(connectionHandle: handle, peer: completion.peer, error: .disconnected(reason: .connectionTimeout), logger: logger)
        let gatt = GATTClient(bearer: link.bearer)
        let identity = completion.resolvedIdentity ?? addressResolver.identity(of: completion.peer)
        if let identity { addressResolver.linkUp(at: completion.peer, identity: identity) }
        let connection = Connection(handle: handle, peer: completion.peer, identity: identity, local: ownAddress(on: completion), role: completion.role,
                                    parameters: completion.parameters, link: link, gatt: gatt, host: self)
        links[handle] = HostLink(connection)
        logger.info("connected to \(completion.peer)\(identity.map { " (identity \($0))" } ?? "") as \(completion.role), handle \(Hex.format(handle)), \(completion.parameters)")
        broadcast(.connected(connection))
        return connection
    }

    /// This device's address over the air on a new link: a private address the controller
    /// made, else the controller's random address when the link came through connecting or
    /// advertising with own address type random (the static identity on a controller without
    /// a public address, or the address set with ``setRandomAddress(_:)``), else the public
    /// address.
    ///
    /// A link that came through an advertising set takes the set's random address, which the
    /// set's LE Advertising Set Terminated names after the connection's event
    /// (``advertisingSetDidConnect(_:handle:)``); until then, the address of the only
    /// connectable set advertising, when there is one.
    private func ownAddress(on completion: ConnectionCompletion) -> DeviceAddress {
        if completion.localPrivateAddress != .zero { return DeviceAddress(completion.localPrivateAddress, type: .random) }
        if completion.role == .peripheral, controllerInfo?.commandFamily == .extended {
            let connectable = connectableAdvertisingSets
            if connectable.count == 1, let set = connectable.first, let address = ownAddress(ofSet: set) { return address }
        }
        let type = completion.role == .central ? ownAddressTypeForScanningAndConnecting
            : advertising.configuration?.parameters.ownAddressType ?? ownAddressType(for: .public)
        if Self.usesRandomAddress(type), let randomAddress {
            return DeviceAddress(randomAddress, type: .random)
        }
        return DeviceAddress(controllerInfo?.address ?? .zero, type: .public)
    }

    /// The advertising sets advertising connectably now: the app's and the legacy advertising's.
    private var connectableAdvertisingSets: [UInt8] {
        var handles = advertisingSetsState.enabled.filter { advertisingSetsState.sets[$0]?.parameters.isConnectable == true }
        if advertising.isEnabled, advertising.configuration?.parameters.isConnectable == true, let handle = advertising.setHandle {
            handles.insert(handle)
        }
        return handles.sorted()
    }

    /// The address an advertising set advertises from: its random address, or the public one.
    func ownAddress(ofSet handle: UInt8) -> DeviceAddress? {
        let type = handle == advertising.setHandle ? advertising.configuration?.set?.parameters.ownAddressType
            : advertisingSetsState.sets[handle]?.parameters.ownAddressType
        guard let type else { return nil }
        if Self.usesRandomAddress(type) { return randomAddress(ofSet: handle).map { DeviceAddress($0, type: .random) } }
        return DeviceAddress(controllerInfo?.address ?? .zero, type: .public)
    }

    /// A central connected through advertising set `handle` (its LE Advertising Set
    /// Terminated): the link was made with that set's address.
    func advertisingSetDidConnect(_ connection: Connection, handle: UInt8) {
        guard let local = ownAddress(ofSet: handle), local != connection.local else { return }
        connection.update(local: local)
        logger.debug("\(connection) came through advertising set \(handle): this device is \(local) on it")
    }

    /// What a central does once a link is up: longest data PDUs, largest ATT MTU.
    private func prepare(_ connection: Connection) async {
        if configuration.requestsDataLengthExtension, controllerInfo?.supports(LESetDataLengthCommand.self, listedAs: .leSetDataLength) == true {
            // The controller's maximum (251 octets and 2120 µs, the LE maximum on the 1M PHY,
            // Core 6.0, Vol 6, Part B, 4.5.10, when it cannot say). The change is reported
            // later by LE Data Length Change; the MTU exchange need not wait for it.
            do {
                let maximum = try await maximumDataLength()
                _ = try await send(LESetDataLengthCommand(connectionHandle: connection.handle, txOctets: maximum.octets, txTime: maximum.time))
            } catch {
                logger.debug("data length extension not available: \(error)")
            }
        }
        if configuration.exchangesMTUOnConnect {
            do {
                _ = try await connection.gatt.exchangeMTU(configuration.preferredATTMTU)
            } catch {
                logger.info("ATT MTU exchange failed, staying at the default MTU: \(error)")
            }
        }
    }

    /// A link whose ATT bearer timed out cannot carry ATT again (Core 6.0, Vol 3, Part F, 3.3.3).
    /// Only that bearer's link: a later link on the same handle has a bearer of its own.
    func disconnectAfterATTTimeout(of bearer: ATTBearer) async {
        guard let connection = connection(bearer.connectionHandle), connection.link.bearer === bearer else { return }
        logger.warning("ATT transaction timeout on \(connection); disconnecting")
        try? await disconnect(connection, reason: .remoteUserTerminatedConnection)
    }

    // MARK: Disconnecting

    /// Reasons the Disconnect command accepts (Core 6.0, Vol 4, Part E, 7.1.6).
    static let validDisconnectReasons: Set<HCIStatus> = [
        .authenticationFailure, .remoteUserTerminatedConnection, .remoteDeviceTerminatedLowResources,
        .remoteDeviceTerminatedPowerOff, .unsupportedRemoteFeature, .pairingWithUnitKeyNotSupported,
        .unacceptableConnectionParameters,
    ]

    /// How long past the supervision timeout a disconnection may take to be reported.
    static let disconnectionReportMargin: Duration = .seconds(2)

    /// Disconnects and returns once the link is down. The link ends within its supervision
    /// timeout even when the peer never acknowledges (Core 6.0, Vol 6, Part B, 5.1.3.1); a
    /// controller that has reported nothing by then (and ``disconnectionReportMargin``) is not
    /// waited for: the host ends the connection itself, with Connection Timeout. Cancelling the
    /// caller stops its wait, not the disconnection.
    func disconnect(_ connection: Connection, reason: HCIStatus) async throws {
        guard Self.validDisconnectReasons.contains(reason) else {
            throw HostError.invalidArgument("\(reason) is not a reason the Disconnect command accepts")
        }
        guard connection.isConnected else { return }
        do {
            _ = try await controller.send(DisconnectCommand(connectionHandle: connection.handle, reason: reason))
        } catch HCIError.commandFailed(_, .unknownConnectionIdentifier) {
            // Already gone; the Disconnection Complete event is on its way or was handled.
        } catch {
            throw HostError.wrap(error)
        }
        let limit = Duration.milliseconds(connection.parameters.supervisionTimeoutMilliseconds) + Self.disconnectionReportMargin
        let clock = configuration.clock
        // Detached: it must run even if the caller stops waiting.
        let deadline = Task.detached { [weak self] in
            do { try await clock.sleep(for: limit) } catch { return }
            await self?.disconnectionNeverReported(connection, after: limit)
        }
        _ = try await connection.waitForDisconnection()
        deadline.cancel()
    }

    /// Only `connection`'s link: when its end was reported and a later link took the handle,
    /// that link is left alone.
    func disconnectionNeverReported(_ connection: Connection, after limit: Duration) {
        guard isCurrent(connection) else { return }
        let handle = connection.handle
        logger.error("the controller did not report the end of connection \(Hex.format(handle)) within \(limit): ending it here")
        controller.forgetConnection(handle)
        connectionEnded(handle, reason: .connectionTimeout)
    }

    func didDisconnect(_ event: DisconnectionCompleteEvent) {
        guard event.status.isSuccess else {
            logger.warning("disconnection of handle \(Hex.format(event.connectionHandle)) failed: \(event.status)")
            return
        }
        connectionEnded(event.connectionHandle, reason: event.reason)
    }

    /// The link is gone, reported by the controller or given up by the host.
    func connectionEnded(_ handle: UInt16, reason: HCIStatus) {
        guard let link = links.removeValue(forKey: handle) else { return }
        let connection = link.connection
        logger.info("disconnected from \(connection.peer): \(reason)")
        addressResolver.linkEnded(at: connection.peer)
        endLink(link, error: .disconnected(reason: reason), reason: reason)
        broadcast(.disconnected(connection, reason: reason))
        advertisingDidDisconnect(connection)
    }
}
