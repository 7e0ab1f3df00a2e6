import BluetoothCore
import BluetoothHCI

/// The three LE connection complete events, reduced to what the host uses.
struct ConnectionCompletion: Sendable {
    var status: HCIStatus
    var handle: UInt16
    var role: ConnectionRole
    var peer: DeviceAddress
    var parameters: ConnectionParameters

    init(_ event: LEConnectionCompleteEvent) {
        self.init(status: event.status, handle: event.connectionHandle, role: event.role, peer: event.peer,
                  interval: event.connectionInterval, latency: event.peripheralLatency, timeout: event.supervisionTimeout)
    }

    init(_ event: LEEnhancedConnectionCompleteEvent) {
        self.init(status: event.status, handle: event.connectionHandle, role: event.role, peer: event.peer,
                  interval: event.connectionInterval, latency: event.peripheralLatency, timeout: event.supervisionTimeout)
    }

    init(_ event: LEEnhancedConnectionCompleteV2Event) {
        self.init(status: event.status, handle: event.connectionHandle, role: event.role, peer: event.peer,
                  interval: event.connectionInterval, latency: event.peripheralLatency, timeout: event.supervisionTimeout)
    }

    private init(status: HCIStatus, handle: UInt16, role: ConnectionRole, peer: DeviceAddress, interval: UInt16, latency: UInt16, timeout: UInt16) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peer = peer
        parameters = ConnectionParameters(interval: interval, peripheralLatency: latency, supervisionTimeout: timeout)
    }
}

/// The connection this host is creating as a central. The controller runs one LE Create
/// Connection at a time (Core 6.0, Vol 4, Part E, 7.8.12), so there is at most one.
struct PendingConnection: Sendable {
    let id: UInt64
    let peer: DeviceAddress
    var continuation: CheckedContinuation<Connection, any Error>?
    var outcome: Result<Connection, HostError>?
    /// Why the attempt was given up (timeout or cancellation), once LE Create Connection
    /// Cancel has been sent.
    var abandonment: HostError?
    /// The controller accepted LE Create Connection and is trying.
    var isInitiating = false
}

extension LEHost {
    /// Whether the controller is trying to connect (it accepted LE Create Connection and has
    /// not reported the end of the attempt).
    public var isConnecting: Bool { pendingConnection?.isInitiating == true }

    /// Connects to a peripheral as the central and returns once the link is up and ready
    /// (ATT MTU exchanged, longest data length requested).
    ///
    /// - Parameter timeout: how long to try; `nil` tries until cancelled. On timeout the
    ///   attempt is cancelled in the controller and ``HostError/connectionTimeout(_:)`` thrown.
    /// Cancelling the calling task cancels the attempt the same way (``HostError/cancelled``).
    /// Connection requests wait for each other: the controller creates one at a time.
    public func connect(to peer: DeviceAddress, request: ConnectionRequest = ConnectionRequest(), timeout: Duration? = .seconds(30)) async throws -> Connection {
        try requirePoweredOn()
        do { try await connectionGate.enter() } catch { throw HostError.cancelled }
        defer { connectionGate.leave() }
        let id = makeIdentifier()
        // Registered before the command goes out, so the completion event cannot be missed.
        pendingConnection = PendingConnection(id: id, peer: peer)
        do {
            try await sendCreateConnection(to: peer, request: request)
        } catch {
            pendingConnection = nil
            if case let .hci(.commandFailed(_, status)) = error {
                throw HostError.connectionFailed(peer, status)
            }
            throw error
        }
        pendingConnection?.isInitiating = true
        let connection = try await waitForPendingConnection(id: id, peer: peer, timeout: timeout)
        await prepare(connection)
        return connection
    }

    private func sendCreateConnection(to peer: DeviceAddress, request: ConnectionRequest) async throws(HostError) {
        let info = controllerInfo
        if info?.supportsExtendedCreateConnection == true {
            let phy = LEExtendedCreateConnectionCommand.PHYParameters(
                scanInterval: request.scanInterval, scanWindow: request.scanWindow,
                connectionIntervalMin: request.intervalRange.lowerBound, connectionIntervalMax: request.intervalRange.upperBound,
                maxLatency: request.peripheralLatency, supervisionTimeout: request.supervisionTimeout)
            _ = try await send(LEExtendedCreateConnectionCommand(
                peerAddressType: peer.type, peerAddress: peer.address, le1M: phy))
        } else {
            _ = try await send(LECreateConnectionCommand(
                scanInterval: request.scanInterval, scanWindow: request.scanWindow,
                peerAddressType: peer.type, peerAddress: peer.address,
                connectionIntervalMin: request.intervalRange.lowerBound, connectionIntervalMax: request.intervalRange.upperBound,
                maxLatency: request.peripheralLatency, supervisionTimeout: request.supervisionTimeout))
        }
    }

    private func waitForPendingConnection(id: UInt64, peer: DeviceAddress, timeout: Duration?) async throws -> Connection {
        let clock = configuration.clock
        let timer = timeout.map { timeout in
            Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self?.abandonPendingConnection(id: id, reason: .connectionTimeout(peer))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Connection, any Error>) in
                guard var pending = pendingConnection, pending.id == id else {
                    continuation.resume(throwing: HostError.cancelled)
                    return
                }
                if let outcome = pending.outcome {
                    pendingConnection = nil
                    continuation.resume(with: outcome.mapError { $0 as any Error })
                    return
                }
                pending.continuation = continuation
                pendingConnection = pending
            }
        } onCancel: {
            Task { await self.abandonPendingConnection(id: id, reason: .cancelled) }
        }
    }

    /// Gives up on a connection attempt: LE Create Connection Cancel makes the controller
    /// report the attempt as failed with Unknown Connection Identifier (Core 6.0, Vol 4,
    /// Part E, 7.8.13), which then resolves it with `reason`.
    private func abandonPendingConnection(id: UInt64, reason: HostError) async {
        guard var pending = pendingConnection, pending.id == id, pending.outcome == nil, pending.abandonment == nil else { return }
        pending.abandonment = reason
        pendingConnection = pending
        logger.info("giving up connecting to \(pending.peer): \(reason)")
        do {
            _ = try await controller.send(LECreateConnectionCancelCommand())
        } catch {
            // Command Disallowed: the connection completed meanwhile; its event resolves it.
            logger.debug("LE Create Connection Cancel: \(error)")
        }
        // Should the controller never report the end of the attempt, do not wait forever.
        try? await configuration.clock.sleep(for: .seconds(2))
        resolvePendingConnection(id: id, with: .failure(reason))
    }

    private func resolvePendingConnection(id: UInt64, with outcome: Result<Connection, HostError>) {
        guard var pending = pendingConnection, pending.id == id, pending.outcome == nil else { return }
        if let continuation = pending.continuation {
            pendingConnection = nil
            continuation.resume(with: outcome.mapError { $0 as any Error })
        } else {
            pending.outcome = outcome
            pendingConnection = pending
        }
    }

    func failPendingConnection(with error: HostError) {
        if let pending = pendingConnection { resolvePendingConnection(id: pending.id, with: .failure(error)) }
    }

    /// An LE (Enhanced) Connection Complete event.
    func didComplete(connection completion: ConnectionCompletion) {
        if completion.role == .central, let pending = pendingConnection, pending.outcome == nil {
            guard completion.status.isSuccess else {
                resolvePendingConnection(id: pending.id, with: .failure(pending.abandonment ?? .connectionFailed(pending.peer, completion.status)))
                return
            }
            let connection = establish(completion)
            if let abandonment = pending.abandonment {
                // The link came up as the attempt was given up: keep the caller's decision.
                resolvePendingConnection(id: pending.id, with: .failure(abandonment))
                Task { try? await disconnect(connection, reason: .remoteUserTerminatedConnection) }
            } else {
                resolvePendingConnection(id: pending.id, with: .success(connection))
            }
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
        let controller = self.controller
        var gattLogger = logger
        gattLogger[metadataKey: "connection"] = "0x\(String(handle, radix: 16))"
        let gatt = GATTClient(
            transactionTimeout: configuration.attTransactionTimeout,
            clock: configuration.clock,
            logger: gattLogger,
            send: { pdu, completion in
                controller.sendACL(connectionHandle: handle, pdu: L2CAPBasicFrame(channelID: .att, payload: pdu).encode(), completion: completion)
            },
            closeLink: { [weak self] in
                Task { [weak self] in await self?.disconnectAfterATTTimeout(handle: handle) }
            }
        )
        let connection = Connection(handle: handle, peer: completion.peer, role: completion.role,
                                    parameters: completion.parameters, gatt: gatt, host: self)
        connectionsByHandle[handle] = connection
        logger.info("connected to \(completion.peer) as \(completion.role), handle 0x\(String(handle, radix: 16)), \(completion.parameters)")
        broadcast(.connected(connection))
        return connection
    }

    /// What a central does once a link is up: longest data PDUs, largest ATT MTU.
    private func prepare(_ connection: Connection) async {
        if configuration.requestsDataLengthExtension, controllerInfo?.supports(.leSetDataLength) == true {
            // 251 octets and 2120 µs are the LE maximum on the 1M PHY (Core 6.0, Vol 6, Part B, 4.5.10).
            do {
                _ = try await send(LESetDataLengthCommand(connectionHandle: connection.handle, txOctets: 251, txTime: 2120))
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
    private func disconnectAfterATTTimeout(handle: UInt16) async {
        guard let connection = connectionsByHandle[handle] else { return }
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
        _ = await connection.waitForDisconnection()
    }

    func didDisconnect(_ event: DisconnectionCompleteEvent) {
        guard event.status.isSuccess else {
            logger.warning("disconnection of handle 0x\(String(event.connectionHandle, radix: 16)) failed: \(event.status)")
            return
        }
        guard let connection = connectionsByHandle.removeValue(forKey: event.connectionHandle) else { return }
        logger.info("disconnected from \(connection.peer): \(event.reason)")
        connection.gatt.connectionDidClose(error: .disconnected(reason: event.reason))
        server.connectionDidClose(handle: connection.handle)
        connection.markDisconnected(reason: event.reason)
        for waiter in parameterUpdateWaiters.removeValue(forKey: event.connectionHandle) ?? [] {
            waiter.resume(throwing: HostError.disconnected(reason: event.reason))
        }
        broadcast(.disconnected(connection, reason: event.reason))
        advertisingDidDisconnect(connection)
    }
}
