import BluetoothCore
import BluetoothHCI

/// Encrypting links: pairing on request, re-encryption with a bond's keys, the controller's
/// Encryption Change and LTK Request (Core 6.0, Vol 3, Part H, 2.4.4; Vol 6, Part B, 5.1.3).
extension LEHost {
    /// Pairs with the peer now, even if a bond exists. As central this sends a Pairing
    /// Request; as peripheral a Security Request, and the central decides whether to pair or
    /// to encrypt with keys it has. Returns the link's security once encrypted.
    ///
    /// With `authenticated`, MITM protection is asked for (the MITM flag of AuthReq): a
    /// pairing that cannot give it (Just Works) fails, and a link that ends up encrypted
    /// without it throws ``PairingFailure/authenticationRequired``; no bond is replaced by it.
    ///
    /// With `minimumKeySize` (central), a pairing that cannot agree on a key at least that long
    /// fails with Encryption Key Size (``PairingFailure/keySizeTooSmall(_:)``) before any key is
    /// made, as when a peer's server refused a shorter key (Encryption Key Size Too Short). It
    /// must be within this device's ``SecurityManagerSettings/maximumKeySize``.
    public func pair(_ connection: Connection, authenticated: Bool = false, minimumKeySize: Int? = nil) async throws -> LinkSecurity {
        try requireLink(connection)
        if let minimumKeySize, !(Bond.keySizes.contains(minimumKeySize) && minimumKeySize <= configuration.security.effectiveMaximumKeySize) {
            throw HostError.invalidArgument("""
                a key of at least \(minimumKeySize) octets: this device offers \(configuration.security.effectiveMinimumKeySize) \
                to \(configuration.security.effectiveMaximumKeySize) (SecurityManagerSettings.maximumKeySize)
                """)
        }
        let security: LinkSecurity
        switch connection.role {
        case .central:
            if let refused = startPairing(on: connection, authenticated: authenticated, minimumKeySize: minimumKeySize) {
                throw HostError.pairingFailed(refused)
            }
            security = try await waitForSecurity(connection)
        case .peripheral:
            requestSecurity(on: connection, authenticated: authenticated)
            security = try await waitForSecurity(connection, answerWithin: configuration.security.timeout)
        }
        return try requireAuthentication(security, authenticated)
    }

    /// Makes the link encrypted, and authenticated if asked: returns at once when it already
    /// is; as central, encrypts with the bond's key when there is one good enough, else pairs
    /// (when `allowPairing`); as peripheral, sends a Security Request.
    ///
    /// A bonded peer that lost its keys answers encryption with PIN or Key Missing; then
    /// this pairs again when `allowPairing`, else throws ``HostError/encryptionFailed(_:)``.
    ///
    /// With `authenticated`, a bond without MITM protection is not used, the pairing asks for
    /// MITM protection (and fails if the IO capabilities allow only Just Works), and a link that
    /// ends up encrypted without it throws ``PairingFailure/authenticationRequired``: never a
    /// success, and the stronger bond, if any, stays. In Secure Connections Only mode only a
    /// level 4 bond encrypts (``SecurityManagerSettings/secureConnectionsOnly``).
    public func secure(_ connection: Connection, authenticated: Bool = false, allowPairing: Bool = true) async throws -> LinkSecurity {
        try requireLink(connection)
        // A pairing past its encryption (distributing keys, or keeping its bond) decides the
        // link's security: its end is the answer, not the moment before it (encrypted, no bond).
        if links[connection.handle]?.security?.isPastEncryption == true {
            return try requireAuthentication(try await waitForSecurity(connection), authenticated)
        }
        let current = connection.security
        // A link still encrypted with a removed bond's key is not secure: pair again. A link
        // secure enough already is the answer, whatever pairing a peer starts on it meanwhile.
        if current.isEncrypted && !current.isBondRemoved && (current.isAuthenticated || !authenticated) { return current }
        if links[connection.handle]?.security?.isPairing == true {
            return try requireAuthentication(try await waitForSecurity(connection), authenticated)
        }
        switch connection.role {
        case .peripheral:
            requestSecurity(on: connection, authenticated: authenticated)
            return try requireAuthentication(try await waitForSecurity(connection, answerWithin: configuration.security.timeout), authenticated)
        case .central:
            let bond = await bond(for: connection)
            // The link may have ended during the lookup, and its handle gone to a new link.
            guard isCurrent(connection) else {
                throw HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier)
            }
            if let bond, let key = bond.peerKeys.longTermKey, bond.isAuthenticated || !authenticated, configuration.security.accepts(bond) {
                encrypt(with: bond, key: key, allowPairing: allowPairing, on: connection)
            } else if allowPairing {
                if let refused = startPairing(on: connection, authenticated: authenticated) { throw HostError.pairingFailed(refused) }
            } else {
                throw HostError.pairingFailed(.authenticationRequired)
            }
        }
        return try requireAuthentication(try await waitForSecurity(connection), authenticated)
    }

    /// The link's security, or ``PairingFailure/authenticationRequired`` when MITM protection
    /// was asked for and the link got none (the peer encrypted with an unauthenticated bond).
    private func requireAuthentication(_ security: LinkSecurity, _ authenticated: Bool) throws -> LinkSecurity {
        guard authenticated, !security.isAuthenticated else { return security }
        logger.warning("the link is encrypted without MITM protection (\(security)), which was required")
        throw HostError.pairingFailed(.authenticationRequired)
    }

    private func requireLink(_ connection: Connection) throws(HostError) {
        try requirePoweredOn()
        guard isCurrent(connection) else {
            throw .disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier)
        }
    }

    /// Peripheral: asks the central for security (Part H, 3.6.7). With `authenticated` the
    /// central's pairing must then give MITM protection.
    private func requestSecurity(on connection: Connection, authenticated: Bool = false) {
        let settings = configuration.security.requiringAuthentication(authenticated)
        links[connection.handle]?.session.requestedAuthentication = authenticated
        sendSecurityManager(.securityRequest(settings.authenticationRequirements), on: connection)
    }

    /// Central: LE Enable Encryption with a bond's key.
    func encrypt(with bond: Bond, key: UInt128, allowPairing: Bool, on connection: Connection) {
        var session = links[connection.handle]?.security ?? SecuritySession()
        session.encryptingWith = bond
        session.repairsOnMissingKey = allowPairing
        links[connection.handle]?.security = session
        connection.gatt.bearer.expectEncryption(LinkSecurity(bond: bond))
        let command = LEEnableEncryptionCommand(connectionHandle: connection.handle, randomNumber: bond.peerKeys.rand,
                                                encryptedDiversifier: bond.peerKeys.ediv, longTermKey: SMPKeyBytes.littleEndian(key))
        Task {
            do {
                _ = try await self.send(command)
            } catch {
                connection.gatt.bearer.expectEncryption(nil)
                self.encryptionChanged(handle: connection.handle, status: .unspecifiedError, enabled: false, keySize: nil)
            }
        }
    }

    // MARK: Controller events

    /// Encryption Change or Encryption Key Refresh Complete. The link's ATT bearer took the new
    /// security already, on the transport's reader thread in the controller's order
    /// (``ATTBearer/encryptionChanged(success:enabled:keySize:)``, from what was expected when
    /// the encryption began); here the pairing goes on, the app hears of it, waiters resume.
    func encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool, keySize: Int?) {
        guard let connection = connection(handle) else { return }
        var session = links[handle]?.security ?? SecuritySession()
        let bond = session.encryptingWith ?? session.answeredWith
        session.encryptingWith = nil
        session.answeredWith = nil
        links[handle]?.security = session

        if var procedure = session.procedure, procedure.phase == .awaitingEncryption {
            if status.isSuccess && enabled { announceSecurity(of: connection) }
            let actions = procedure.encryptionChanged(success: status.isSuccess && enabled)
            links[handle]?.security?.procedure = procedure
            perform(actions, on: connection)
            return
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
        let security = announceSecurity(of: connection)
        resolveSecurityWaiters(handle, with: .success(security))
    }

    /// Tells the app the link's security, when it is not what it was last told.
    @discardableResult
    func announceSecurity(of connection: Connection) -> LinkSecurity {
        let security = connection.security
        guard security != links[connection.handle]?.security?.announcedSecurity ?? .unencrypted else { return security }
        links[connection.handle]?.session.announcedSecurity = security
        logger.info("link to \(connection.peer): \(security)")
        broadcast(.securityChanged(connection, security))
        return security
    }

    /// What a link encrypted with the running pairing's key (its STK or LTK) is worth.
    static func encryptionSecurity(of procedure: PairingProcedure) -> LinkSecurity {
        LinkSecurity(isEncrypted: true, isAuthenticated: procedure.method.isAuthenticated, isSecureConnections: procedure.isSecureConnections,
                     keySize: procedure.keySize)
    }

    /// Peripheral: the central started encryption. The pairing's key while pairing, else the
    /// bond's (EDIV and Rand name a legacy key this device distributed; both are 0 for an LE
    /// Secure Connections key), else a negative reply (Vol 4, Part E, 7.8.25 and 7.8.26).
    func answer(_ request: LELongTermKeyRequestEvent) {
        let handle = request.connectionHandle
        if let procedure = links[handle]?.security?.procedure,
           let key = procedure.keyForEncryption(ediv: request.encryptedDiversifier, rand: request.randomNumber) {
            links[handle]?.connection.gatt.bearer.expectEncryption(Self.encryptionSecurity(of: procedure))
            replyLongTermKey(key, handle: handle)
            return
        }
        guard let connection = connection(handle) else {
            refuseLongTermKey(handle: handle)
            return
        }
        Task {
            let bond = await self.bond(for: connection)
            // The link may have ended while the bond was looked up, and its handle been given
            // to a new link: that link's encryption must not be taken for this bond's.
            guard self.isCurrent(connection) else { return }
            guard let bond,
                  let key = Self.longTermKey(of: bond, ediv: request.encryptedDiversifier, rand: request.randomNumber) else {
                self.logger.info("no key for \(connection.peer)'s encryption request")
                self.refuseLongTermKey(handle: handle)
                return
            }
            guard self.configuration.security.accepts(bond) else {
                // Secure Connections Only mode: a bond below level 4 never encrypts (Vol 3,
                // Part C, 10.2.4); the central hears PIN or Key Missing and may pair again.
                self.logger.info("\(connection.peer)'s \(bond.strength) bond is below level 4: refused in Secure Connections Only mode")
                self.refuseLongTermKey(handle: handle)
                return
            }
            self.noteAnsweredWith(bond, handle: handle)
            connection.gatt.bearer.expectEncryption(LinkSecurity(bond: bond))
            self.replyLongTermKey(key, handle: handle)
        }
    }

    private func noteAnsweredWith(_ bond: Bond, handle: UInt16) {
        links[handle]?.session.answeredWith = bond
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
                guard isCurrent(connection), !Task.isCancelled else {
                    continuation.resume(throwing: Task.isCancelled ? HostError.cancelled
                        : HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier))
                    return
                }
                links[handle]?.session.waiters[id] = continuation
            }
        } onCancel: {
            Task { await self.cancelSecurityWaiter(handle, id: id) }
        }
    }

    private func securityRequestUnanswered(_ handle: UInt16, id: UInt64) {
        // A pairing running or finishing: the central did answer, and the pairing's end will.
        if links[handle]?.security?.isPairing == true { return }
        guard let waiter = links[handle]?.security?.waiters.removeValue(forKey: id) else { return }
        logger.info("the central did not answer the Security Request within \(configuration.security.timeout)")
        waiter.resume(throwing: HostError.pairingFailed(.timeout))
    }

    private func cancelSecurityWaiter(_ handle: UInt16, id: UInt64) {
        links[handle]?.security?.waiters.removeValue(forKey: id)?.resume(throwing: HostError.cancelled)
    }

    func resolveSecurityWaiters(_ handle: UInt16, with result: Result<LinkSecurity, HostError>) {
        guard let waiters = links[handle]?.security?.waiters, !waiters.isEmpty else { return }
        links[handle]?.security?.waiters = [:]
        for waiter in waiters.values { waiter.resume(with: result.mapError { $0 as any Error }) }
    }

    /// The link ended (``endLink(_:error:reason:)``): its pairing fails, its questions to the
    /// agent are withdrawn and its waiters get `error`.
    func securityDidEnd(_ session: SecuritySession, on connection: Connection, error: HostError) {
        session.timer?.cancel()
        for task in session.agentTasks { task.cancel() }
        if var procedure = session.procedure, !procedure.isFinished {
            // A peer that ends the link once a commitment told it what it wanted (a bit of a
            // passkey this side's user types) has made a guess like any other: it counts (Part H,
            // 2.3.6), or ending the link would be a free retry.
            if procedure.gaveGuessAtSecret { countFailedPairing(on: connection, gaveGuessAtSecret: true) }
            _ = procedure.cancel(reason: .unspecifiedReason)
            broadcast(.pairingFinished(connection, .failure(.disconnected)))
            let agent = pairingAgent
            Task { await agent.pairingFinished(with: connection.peer, result: .failure(.disconnected)) }
        }
        for waiter in session.waiters.values { waiter.resume(throwing: error) }
        // An address change held back by this link's pairing may go now.
        addressingBlockerEnded()
    }
}
