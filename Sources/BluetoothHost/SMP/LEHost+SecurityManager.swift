import BluetoothCore
import BluetoothHCI

/// The Security Manager's I/O (Core 6.0, Vol 3, Part H): SMP PDUs on the fixed channel
/// 0x0006 go into the link's ``PairingProcedure`` and its actions come out here: PDUs to
/// send, questions for the ``PairingAgent``, LE Enable Encryption, the outcome.
extension LEHost {
    /// Sets who answers pairing questions (passkeys, numeric comparison, consent).
    public func setPairingAgent(_ agent: any PairingAgent) {
        pairingAgent = agent
    }

    // MARK: Inbound SMP

    func receiveSecurityManager(_ payload: [UInt8], on connection: Connection) {
        let handle = connection.handle
        if securitySessions[handle]?.isHalted == true {
            // After an SMP timeout nothing more is processed on this link (Part H, 3.4).
            logger.debug("SMP PDU from \(connection.peer) ignored after the SMP timeout")
            return
        }
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU.decode(payload)
        } catch {
            receiveMalformedSecurityManager(payload, error: error, on: connection)
            return
        }
        logger.debug("SMP from \(connection.peer): \(pdu)")
        if var procedure = securitySessions[handle]?.procedure, !procedure.isFinished {
            restartSecurityTimer(handle)
            let actions: [PairingProcedure.Action]
            if procedure.role == .responder, procedure.phase == .idle, pdu.code != .pairingFailed {
                // The agent has not yet accepted the first Pairing Request: anything more (a
                // second request too) is out of order, and must not be answered in its place
                // (Part H, 3.3).
                actions = procedure.fail(.unspecifiedReason, .unexpectedPDU(pdu.code))
            } else {
                actions = procedure.receive(pdu)
            }
            securitySessions[handle]?.procedure = procedure
            perform(actions, on: connection)
            return
        }
        switch pdu {
        case let .pairingRequest(features):
            guard connection.role == .peripheral else {
                // Only a central starts pairing (Part H, 3.5.1).
                sendSecurityManager(.pairingFailed(.commandNotSupported), on: connection)
                return
            }
            receivePairingRequest(features, on: connection)
        case let .securityRequest(authReq):
            guard connection.role == .central else {
                sendSecurityManager(.pairingFailed(.commandNotSupported), on: connection)
                return
            }
            Task { await self.answerSecurityRequest(authReq, on: connection) }
        case .pairingFailed, .keypressNotification:
            break
        default:
            // A pairing step with no pairing running (Part H, 3.3).
            logger.info("\(pdu.code.name) from \(connection.peer) with no pairing running")
            sendSecurityManager(.pairingFailed(.unspecifiedReason), on: connection)
        }
    }

    /// A PDU that does not decode: Pairing Failed, Invalid Parameters when it could belong to
    /// a pairing (Part H, 3.5.5); a code reserved for future use is ignored (Part H, 3.3).
    private func receiveMalformedSecurityManager(_ payload: [UInt8], error: PacketDecodingError, on connection: Connection) {
        let handle = connection.handle
        if case .unknownOpcode = error {
            logger.debug("SMP PDU with a reserved code from \(connection.peer) ignored")
            return
        }
        logger.info("malformed SMP PDU from \(connection.peer): \(error)")
        if var procedure = securitySessions[handle]?.procedure, !procedure.isFinished {
            let actions = procedure.fail(.invalidParameters, .invalidFeatures("malformed \(error)"))
            securitySessions[handle]?.procedure = procedure
            perform(actions, on: connection)
            return
        }
        let code = payload.first.map(SMPCode.init(rawValue:))
        if code == .pairingRequest || code == .securityRequest {
            sendSecurityManager(.pairingFailed(.invalidParameters), on: connection)
        }
    }

    /// Peripheral: a central starts pairing. Refused with Repeated Attempts while the peer's
    /// back-off runs (Part H, 2.3.6), and with Pairing Not Supported when the agent says no.
    private func receivePairingRequest(_ features: SMPPairingFeatures, on connection: Connection) {
        if let backoff = pairingBackoff[connection.peer.address], configuration.clock.now < backoff.notBefore {
            logger.info("pairing request from \(connection.peer) within its back-off: Repeated Attempts")
            sendSecurityManager(.pairingFailed(.repeatedAttempts), on: connection)
            return
        }
        let id = beginProcedure(makeProcedure(role: .responder, on: connection), on: connection)
        let agent = pairingAgent
        Task {
            let accepted = await agent.shouldAcceptPairing(with: connection.peer)
            self.pairingRequestAnswered(features, accepted: accepted, id: id, on: connection)
        }
    }

    private func pairingRequestAnswered(_ features: SMPPairingFeatures, accepted: Bool, id: UInt64, on connection: Connection) {
        guard var procedure = currentProcedure(connection.handle, id: id) else { return }
        let actions: [PairingProcedure.Action]
        if accepted {
            actions = procedure.receive(.pairingRequest(features))
        } else {
            actions = procedure.fail(.pairingNotSupported, .userRejected)
        }
        securitySessions[connection.handle]?.procedure = procedure
        perform(actions, on: connection)
    }

    /// Central: starts pairing as the initiator. Does nothing while a pairing runs.
    func startPairing(on connection: Connection) {
        if let running = securitySessions[connection.handle]?.procedure, !running.isFinished { return }
        var procedure = makeProcedure(role: .initiator, on: connection)
        let actions = procedure.start()
        _ = beginProcedure(procedure, on: connection)
        perform(actions, on: connection)
    }

    /// Installs a new procedure for the link and starts its Security Manager Timer.
    private func beginProcedure(_ procedure: PairingProcedure, on connection: Connection) -> UInt64 {
        let id = makeIdentifier()
        var session = securitySessions[connection.handle] ?? SecuritySession()
        session.procedure = procedure
        session.procedureID = id
        securitySessions[connection.handle] = session
        restartSecurityTimer(connection.handle)
        return id
    }

    private func currentProcedure(_ handle: UInt16, id: UInt64) -> PairingProcedure? {
        guard let session = securitySessions[handle], session.procedureID == id, let procedure = session.procedure,
              !procedure.isFinished else { return nil }
        return procedure
    }

    func makeProcedure(role: PairingProcedure.Role, on connection: Connection) -> PairingProcedure {
        // c1 and f5/f6 take the addresses over the air; the identity distributed stays public.
        let local = connection.local
        let peer = DeviceAddress(connection.peer.address, type: connection.peer.type.base)
        return PairingProcedure(role: role, settings: configuration.security,
                                initiatorAddress: role == .initiator ? local : peer,
                                responderAddress: role == .initiator ? peer : local,
                                localIdentity: localAddress, localIdentityResolvingKey: localIdentityResolvingKey,
                                localOutOfBand: localOutOfBand, peerOutOfBand: peerOutOfBand[connection.peer.address])
    }

    /// This device's identity: the controller's public address (a link's own address over the
    /// air is ``Connection/local``).
    var localAddress: DeviceAddress {
        DeviceAddress(controllerInfo?.address ?? .zero, type: .public)
    }

    func sendSecurityManager(_ pdu: SMPPDU, on connection: Connection) {
        logger.debug("SMP to \(connection.peer): \(pdu)")
        l2cap.send(pdu.encode(), channel: .securityManager, connectionHandle: connection.handle)
    }

    // MARK: Actions

    func perform(_ actions: [PairingProcedure.Action], on connection: Connection) {
        guard let id = securitySessions[connection.handle]?.procedureID else { return }
        for action in actions {
            switch action {
            case let .send(pdu):
                sendSecurityManager(pdu, on: connection)
                restartSecurityTimer(connection.handle)
            case let .prompt(prompt):
                ask(prompt, id: id, on: connection)
            case let .encrypt(key, ediv, rand):
                startEncryption(key: key, ediv: ediv, rand: rand, id: id, on: connection)
            case let .complete(outcome):
                pairingSucceeded(outcome, on: connection)
            case let .fail(failure):
                pairingFailed(failure, on: connection)
            }
        }
    }

    private func ask(_ prompt: PairingPrompt, id: UInt64, on connection: Connection) {
        let agent = pairingAgent
        let peer = connection.peer
        logger.info("pairing with \(peer): \(prompt)")
        switch prompt {
        case let .displayPasskey(passkey):
            Task { await agent.display(passkey: passkey, for: peer) }
        case .enterPasskey:
            Task {
                let passkey = await agent.passkey(for: peer)
                self.answer(id: id, on: connection) { $0.passkeyEntered(passkey) }
            }
        case let .confirmNumber(number):
            Task {
                let matches = await agent.confirm(number: number, for: peer)
                self.answer(id: id, on: connection) { $0.numberConfirmed(matches) }
            }
        }
    }

    private func answer(id: UInt64, on connection: Connection, _ feed: (inout PairingProcedure) -> [PairingProcedure.Action]) {
        guard var procedure = currentProcedure(connection.handle, id: id) else { return }
        let actions = feed(&procedure)
        securitySessions[connection.handle]?.procedure = procedure
        perform(actions, on: connection)
    }

    private func startEncryption(key: UInt128, ediv: UInt16, rand: UInt64, id: UInt64, on connection: Connection) {
        let command = LEEnableEncryptionCommand(connectionHandle: connection.handle, randomNumber: rand, encryptedDiversifier: ediv,
                                                longTermKey: SMPKeyBytes.littleEndian(key))
        Task {
            do {
                _ = try await self.send(command)
            } catch {
                self.logger.warning("LE Enable Encryption on \(connection.peer) failed: \(error)")
                self.answer(id: id, on: connection) { $0.encryptionChanged(success: false) }
            }
        }
    }

    private func pairingSucceeded(_ outcome: PairingOutcome, on connection: Connection) {
        let handle = connection.handle
        stopSecurityTimer(handle)
        if let dropped = outcome.droppedIdentityAddress {
            logger.warning("\(connection.peer) distributed the identity address \(dropped), which is not its own: identity and IRK ignored, the bond stays under \(connection.peer)")
        }
        pairingBackoff[connection.peer.address] = nil
        let security = outcome.security
        connection.gatt.bearer.setSecurity(security)
        logger.info("paired with \(connection.peer): \(outcome.method), \(security)")
        var saved: Task<Void, Never>?
        if outcome.isBonding {
            let bond = makeBond(outcome, peer: connection.peer)
            let store = configuration.bondStore
            let logger = logger
            let previous = pendingBondSave
            // Saves run in order; lookups wait for them (see `settledBondStore`), and the
            // callers of pair() learn the outcome once the bond is stored.
            let save = Task {
                await previous?.value
                do { try await store.save(bond) } catch { logger.error("could not store the bond with \(bond.peerIdentity): \(error)") }
            }
            pendingBondSave = save
            saved = save
            rememberBond(bond)
        }
        broadcast(.securityChanged(connection, security))
        broadcast(.pairingFinished(connection, .success(outcome)))
        if let saved {
            Task {
                await saved.value
                self.resolveSecurityWaiters(handle, with: .success(security))
            }
        } else {
            resolveSecurityWaiters(handle, with: .success(security))
        }
        let agent = pairingAgent
        Task { await agent.pairingFinished(with: connection.peer, result: .success(outcome)) }
    }

    private func pairingFailed(_ failure: PairingFailure, on connection: Connection) {
        let handle = connection.handle
        stopSecurityTimer(handle)
        if failure == .timeout { securitySessions[handle]?.isHalted = true }
        if failure != .disconnected { extendBackoff(for: connection.peer.address) }
        logger.info("pairing with \(connection.peer) failed: \(failure)")
        broadcast(.pairingFinished(connection, .failure(failure)))
        resolveSecurityWaiters(handle, with: .failure(.pairingFailed(failure)))
        let agent = pairingAgent
        Task { await agent.pairingFinished(with: connection.peer, result: .failure(failure)) }
    }

    /// Part H, 2.3.6: each failure doubles the wait before the peer may pair again.
    private func extendBackoff(for peer: BluetoothAddress) {
        let settings = configuration.security
        let interval = pairingBackoff[peer].map { min($0.interval * 2, settings.maximumRetryInterval) } ?? settings.initialRetryInterval
        pairingBackoff[peer] = PairingRetryBackoff(interval: interval, notBefore: configuration.clock.now + interval)
        if pairingBackoff.count > 256, let oldest = pairingBackoff.min(by: { $0.value.notBefore < $1.value.notBefore })?.key {
            pairingBackoff[oldest] = nil
        }
    }

    // MARK: Security Manager Timer

    /// Restarts the 30-second timer of the link's pairing (Part H, 3.4): on every SMP PDU sent
    /// or received. One timer task per pairing re-arms itself until the deadline holds.
    func restartSecurityTimer(_ handle: UInt16) {
        guard securitySessions[handle]?.procedure != nil else { return }
        let deadline = configuration.clock.now + configuration.security.timeout
        securitySessions[handle]?.deadline = deadline
        guard securitySessions[handle]?.timer == nil, let id = securitySessions[handle]?.procedureID else { return }
        let clock = configuration.clock
        securitySessions[handle]?.timer = Task {
            var next = deadline
            while true {
                do { try await clock.sleep(until: next) } catch { return }
                guard let current = self.securityDeadline(handle, id: id) else { return }
                if current <= clock.now { break }
                next = current
            }
            self.securityTimerExpired(handle, id: id)
        }
    }

    private func securityDeadline(_ handle: UInt16, id: UInt64) -> BluetoothClock.Instant? {
        guard let session = securitySessions[handle], session.procedureID == id else { return nil }
        return session.deadline
    }

    private func securityTimerExpired(_ handle: UInt16, id: UInt64) {
        securitySessions[handle]?.timer = nil
        guard var procedure = currentProcedure(handle, id: id), let connection = connectionsByHandle[handle] else { return }
        logger.warning("pairing with \(connection.peer) timed out")
        let actions = procedure.timedOut()
        securitySessions[handle]?.procedure = procedure
        perform(actions, on: connection)
    }

    func stopSecurityTimer(_ handle: UInt16) {
        securitySessions[handle]?.timer?.cancel()
        securitySessions[handle]?.timer = nil
        securitySessions[handle]?.deadline = nil
    }
}

/// 128-bit keys as HCI carries them: 16 octets, least significant first.
enum SMPKeyBytes {
    static func littleEndian(_ key: UInt128) -> [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: key >> (8 * $0)) }
    }
}
