import BluetoothCore
import BluetoothHCI

/// Encrypting links: pairing on request, re-encryption with a bond's keys, the controller's
/// Encryption Change and LTK Request (Core 6.0, Vol 3, Part H, 2.4.4; Vol 6, Part B, 5.1.3).
extension LEHost {
    /// Pairs with the peer now, even if a bond exists. As central this sends a Pairing
    /// Request; as peripheral a Security Request, and the central decides whether to pair or
    /// to encrypt with keys it has. Returns the link's security once encrypted.
    public func pair(_ connection: Connection) async throws -> LinkSecurity {
        try requireLink(connection)
        switch connection.role {
        case .central:
            startPairing(on: connection)
            return try await waitForSecurity(connection)
        case .peripheral:
            requestSecurity(on: connection)
            return try await waitForSecurity(connection, answerWithin: configuration.security.timeout)
        }
    }

    /// Makes the link encrypted, and authenticated if asked: returns at once when it already
    /// is; as central, encrypts with the bond's key when there is one good enough, else pairs
    /// (when `allowPairing`); as peripheral, sends a Security Request.
    ///
    /// A bonded peer that lost its keys answers encryption with PIN or Key Missing; then
    /// this pairs again when `allowPairing`, else throws ``HostError/encryptionFailed(_:)``.
    public func secure(_ connection: Connection, authenticated: Bool = false, allowPairing: Bool = true) async throws -> LinkSecurity {
        try requireLink(connection)
        let current = connection.security
        if current.isEncrypted && (current.isAuthenticated || !authenticated) { return current }
        if let running = securitySessions[connection.handle]?.procedure, !running.isFinished {
            return try await waitForSecurity(connection)
        }
        switch connection.role {
        case .peripheral:
            requestSecurity(on: connection, authenticated: authenticated)
            return try await waitForSecurity(connection, answerWithin: configuration.security.timeout)
        case .central:
            let bond = await bond(for: connection)
            if let bond, let key = bond.peerKeys.longTermKey, bond.isAuthenticated || !authenticated {
                encrypt(with: bond, key: key, allowPairing: allowPairing, on: connection)
            } else if allowPairing {
                startPairing(on: connection)
            } else {
                throw HostError.pairingFailed(.authenticationRequired)
            }
        }
        return try await waitForSecurity(connection)
    }

    private func requireLink(_ connection: Connection) throws(HostError) {
        try requirePoweredOn()
        guard connectionsByHandle[connection.handle] === connection else {
            throw .disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier)
        }
    }

    /// Peripheral: asks the central for security (Part H, 3.6.7).
    private func requestSecurity(on connection: Connection, authenticated: Bool = false) {
        var authReq = configuration.security.authenticationRequirements
        if authenticated { authReq.insert(.mitm) }
        sendSecurityManager(.securityRequest(authReq), on: connection)
    }

    /// Central: a peripheral sent a Security Request. With a bond good enough for what it asks,
    /// encrypt with it; else pair, if the agent accepts (Part H, 2.4.6).
    func answerSecurityRequest(_ authReq: SMPAuthenticationRequirements, on connection: Connection) async {
        guard connectionsByHandle[connection.handle] === connection else { return }
        if let running = securitySessions[connection.handle]?.procedure, !running.isFinished { return }
        if connection.security.isEncrypted && (connection.security.isAuthenticated || !authReq.contains(.mitm)) { return }
        if let bond = await bond(for: connection), let key = bond.peerKeys.longTermKey,
           bond.isAuthenticated || !authReq.contains(.mitm) {
            encrypt(with: bond, key: key, allowPairing: true, on: connection)
            return
        }
        guard await pairingAgent.shouldAcceptPairing(with: connection.peer) else {
            sendSecurityManager(.pairingFailed(.pairingNotSupported), on: connection)
            return
        }
        startPairing(on: connection)
    }

    /// Central: LE Enable Encryption with a bond's key.
    private func encrypt(with bond: Bond, key: UInt128, allowPairing: Bool, on connection: Connection) {
        var session = securitySessions[connection.handle] ?? SecuritySession()
        session.encryptingWith = bond
        session.repairsOnMissingKey = allowPairing
        securitySessions[connection.handle] = session
        let command = LEEnableEncryptionCommand(connectionHandle: connection.handle, randomNumber: bond.peerKeys.rand,
                                                encryptedDiversifier: bond.peerKeys.ediv, longTermKey: SMPKeyBytes.littleEndian(key))
        Task {
            do {
                _ = try await self.send(command)
            } catch {
                self.encryptionChanged(handle: connection.handle, status: .unspecifiedError, enabled: false, keySize: nil)
            }
        }
    }

    // MARK: Controller events

    /// Encryption Change or Encryption Key Refresh Complete.
    func encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool, keySize: Int?) {
        guard let connection = connectionsByHandle[handle] else { return }
        var session = securitySessions[handle] ?? SecuritySession()
        let bond = session.encryptingWith ?? session.answeredWith
        session.encryptingWith = nil
        session.answeredWith = nil
        securitySessions[handle] = session

        if var procedure = session.procedure, procedure.phase == .awaitingEncryption {
            // A pairing's key: no bond's until the pairing stores one.
            securitySessions[handle]?.bondIdentity = nil
            if status.isSuccess && enabled {
                let security = LinkSecurity(isEncrypted: true, isAuthenticated: procedure.method.isAuthenticated,
                                            isSecureConnections: procedure.isSecureConnections, keySize: keySize ?? procedure.keySize)
                setSecurity(security, on: connection)
            }
            let actions = procedure.encryptionChanged(success: status.isSuccess && enabled)
            securitySessions[handle]?.procedure = procedure
            perform(actions, on: connection)
            return
        }
        // Whose key encrypts the link now: a stored key's bond; a key refresh keeps it.
        if !(status.isSuccess && enabled) {
            securitySessions[handle]?.bondIdentity = nil
        } else if let bond {
            securitySessions[handle]?.bondIdentity = bond.peerIdentity
        }
        guard status.isSuccess else {
            logger.warning("encryption of \(connection.peer) failed: \(status)")
            if status == .pinOrKeyMissing, connection.role == .central, bond != nil, session.repairsOnMissingKey {
                // The peer lost the bond (Part H, 2.4.4.1 leaves it to the host): pair again.
                logger.info("\(connection.peer) has no key for this device: pairing again")
                startPairing(on: connection)
                return
            }
            resolveSecurityWaiters(handle, with: .failure(.encryptionFailed(status)))
            return
        }
        let security: LinkSecurity
        if let bond {
            security = LinkSecurity(isEncrypted: enabled, isAuthenticated: bond.isAuthenticated, isSecureConnections: bond.isSecureConnections,
                                    keySize: keySize ?? bond.keySize, isBonded: true)
        } else {
            // A key refresh keeps what the link had.
            security = enabled ? connection.security : .unencrypted
        }
        setSecurity(security, on: connection)
        resolveSecurityWaiters(handle, with: .success(security))
    }

    private func setSecurity(_ security: LinkSecurity, on connection: Connection) {
        guard security != connection.security else { return }
        connection.gatt.bearer.setSecurity(security)
        logger.info("link to \(connection.peer): \(security)")
        broadcast(.securityChanged(connection, security))
    }

    /// Peripheral: the central started encryption. The pairing's key while pairing, else the
    /// bond's (EDIV and Rand name a legacy key this device distributed; both are 0 for an LE
    /// Secure Connections key), else a negative reply (Vol 4, Part E, 7.8.25 and 7.8.26).
    func answer(_ request: LELongTermKeyRequestEvent) {
        let handle = request.connectionHandle
        if let key = securitySessions[handle]?.procedure?.keyForEncryption(ediv: request.encryptedDiversifier,
                                                                            rand: request.randomNumber) {
            replyLongTermKey(key, handle: handle)
            return
        }
        guard let connection = connectionsByHandle[handle] else {
            refuseLongTermKey(handle: handle)
            return
        }
        Task {
            guard let bond = await self.bond(for: connection),
                  let key = Self.longTermKey(of: bond, ediv: request.encryptedDiversifier, rand: request.randomNumber) else {
                self.logger.info("no key for \(connection.peer)'s encryption request")
                self.refuseLongTermKey(handle: handle)
                return
            }
            self.noteAnsweredWith(bond, handle: handle)
            self.replyLongTermKey(key, handle: handle)
        }
    }

    private func noteAnsweredWith(_ bond: Bond, handle: UInt16) {
        securitySessions[handle, default: SecuritySession()].answeredWith = bond
    }

    /// The LTK a central asks for with EDIV and Rand: the shared key of an LE Secure
    /// Connections bond (both 0), or the legacy key this device distributed under them.
    static func longTermKey(of bond: Bond, ediv: UInt16, rand: UInt64) -> UInt128? {
        if bond.isSecureConnections { return ediv == 0 && rand == 0 ? bond.localKeys.longTermKey : nil }
        guard bond.localKeys.ediv == ediv, bond.localKeys.rand == rand else { return nil }
        return bond.localKeys.longTermKey
    }

    private func replyLongTermKey(_ key: UInt128, handle: UInt16) {
        Task { _ = try? await self.send(LELongTermKeyRequestReplyCommand(connectionHandle: handle, longTermKey: SMPKeyBytes.littleEndian(key))) }
    }

    private func refuseLongTermKey(handle: UInt16) {
        Task { _ = try? await self.send(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: handle)) }
    }

    // MARK: Waiting

    /// Waits until the link is secure or the attempt fails. Throws ``HostError/cancelled`` when
    /// the task is cancelled (the pairing goes on). With `answerWithin` (after a Security
    /// Request), fails with ``PairingFailure/timeout`` if by then the central has neither
    /// started pairing nor encrypted (the Security Manager Timer, Core 6.0, Vol 3, Part H, 3.4).
    func waitForSecurity(_ connection: Connection, answerWithin: Duration? = nil) async throws -> LinkSecurity {
        let id = makeIdentifier()
        let handle = connection.handle
        if let answerWithin {
            let clock = configuration.clock
            Task {
                try? await clock.sleep(for: answerWithin)
                self.securityRequestUnanswered(handle, id: id)
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard connectionsByHandle[handle] === connection, !Task.isCancelled else {
                    continuation.resume(throwing: Task.isCancelled ? HostError.cancelled
                        : HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier))
                    return
                }
                securitySessions[handle, default: SecuritySession()].waiters[id] = continuation
            }
        } onCancel: {
            Task { await self.cancelSecurityWaiter(handle, id: id) }
        }
    }

    private func securityRequestUnanswered(_ handle: UInt16, id: UInt64) {
        if let running = securitySessions[handle]?.procedure, !running.isFinished { return }
        guard let waiter = securitySessions[handle]?.waiters.removeValue(forKey: id) else { return }
        logger.info("the central did not answer the Security Request within \(configuration.security.timeout)")
        waiter.resume(throwing: HostError.pairingFailed(.timeout))
    }

    private func cancelSecurityWaiter(_ handle: UInt16, id: UInt64) {
        securitySessions[handle]?.waiters.removeValue(forKey: id)?.resume(throwing: HostError.cancelled)
    }

    func resolveSecurityWaiters(_ handle: UInt16, with result: Result<LinkSecurity, HostError>) {
        guard let waiters = securitySessions[handle]?.waiters, !waiters.isEmpty else { return }
        securitySessions[handle]?.waiters = [:]
        for waiter in waiters.values { waiter.resume(with: result.mapError { $0 as any Error }) }
    }

    /// The link ended: its pairing fails and its waiters learn why.
    func securityDidDisconnect(_ connection: Connection, reason: HCIStatus) {
        let handle = connection.handle
        guard let session = securitySessions.removeValue(forKey: handle) else { return }
        session.timer?.cancel()
        if var procedure = session.procedure, !procedure.isFinished {
            _ = procedure.cancel(reason: .unspecifiedReason)
            broadcast(.pairingFinished(connection, .failure(.disconnected)))
            let agent = pairingAgent
            Task { await agent.pairingFinished(with: connection.peer, result: .failure(.disconnected)) }
        }
        for waiter in session.waiters.values { waiter.resume(throwing: HostError.disconnected(reason: reason)) }
    }
}
