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
        if links[handle]?.security?.isHalted == true {
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
        if var procedure = links[handle]?.security?.procedure, !procedure.isFinished {
            // What the peer sends does not restart the Security Manager Timer: only this
            // device's own PDUs do (Part H, 3.4), so a peer cannot keep a pairing, and the
            // question its user is asked, alive with Keypress Notifications or repeats.
            let actions: [PairingProcedure.Action]
            if procedure.role == .responder, procedure.phase == .idle, pdu.code != .pairingFailed {
                // The agent has not yet accepted the first Pairing Request: anything more (a
                // second request too) is out of order, and must not be answered in its place
                // (Part H, 3.3).
                actions = procedure.fail(.unspecifiedReason, .unexpectedPDU(pdu.code))
            } else {
                // The method is chosen with the Pairing Response: with the budget of passkey
                // guesses as it is now, not as it was when the pairing started.
                if case .pairingResponse = pdu { closingPasskeyEntry(&procedure) }
                actions = procedure.receive(pdu)
            }
            links[handle]?.security?.procedure = procedure
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
            receiveSecurityRequest(authReq, on: connection)
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
        if var procedure = links[handle]?.security?.procedure, !procedure.isFinished {
            let actions = procedure.fail(.invalidParameters, .invalidFeatures("malformed \(error)"))
            links[handle]?.security?.procedure = procedure
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
    /// The bond the central's address names, if any, is looked up before the request is
    /// answered: a weaker pairing then waits for the agent (``BondReplacement``).
    private func receivePairingRequest(_ features: SMPPairingFeatures, on connection: Connection) {
        if let wait = pairingAttemptWait(connection) {
            logger.info("pairing request from \(connection.peer) within its back-off (\(wait) left): Repeated Attempts")
            sendSecurityManager(.pairingFailed(.repeatedAttempts), on: connection)
            return
        }
        let id = beginProcedure(makeProcedure(role: .responder, on: connection), on: connection)
        let agent = pairingAgent
        let peer = connection.peer
        askAgent(on: connection) {
            let accepted = await agent.shouldAcceptPairing(with: peer)
            let bonded = accepted ? await self.bond(for: connection) : nil
            let kept = accepted && bonded == nil ? await self.bondsAtLimit() : nil
            await self.pairingRequestAnswered(features, accepted: accepted, bonded: bonded, keptAtLimit: kept, id: id, on: connection)
        }
    }

    private func pairingRequestAnswered(_ features: SMPPairingFeatures, accepted: Bool, bonded: Bond?, keptAtLimit: Int?, id: UInt64,
                                        on connection: Connection) {
        guard var procedure = currentProcedure(connection.handle, id: id) else { return }
        let actions: [PairingProcedure.Action]
        if accepted {
            procedure.bonded = bonded
            if let keptAtLimit { withoutBonding(&procedure, kept: keptAtLimit, peer: connection.peer) }
            // The method is chosen now, perhaps long after the request came (the agent's answer).
            closingPasskeyEntry(&procedure)
            actions = procedure.receive(.pairingRequest(features))
        } else {
            actions = procedure.fail(.pairingNotSupported, .userRejected)
        }
        links[connection.handle]?.security?.procedure = procedure
        perform(actions, on: connection)
    }

    /// Central: starts pairing as the initiator (with MITM protection when `authenticated`).
    /// Does nothing while a pairing runs; returns why it did not start, within the peer's
    /// Repeated Attempts back-off (Part H, 2.3.6, which binds the initiator too). The Pairing
    /// Request leaves once the bond the peer's address names, if any, is looked up.
    @discardableResult
    func startPairing(on connection: Connection, authenticated: Bool = false, minimumKeySize: Int? = nil) -> PairingFailure? {
        if let running = links[connection.handle]?.security?.procedure, !running.isFinished { return nil }
        if let wait = pairingAttemptWait(connection) {
            logger.info("not pairing with \(connection.peer): a pairing failed recently (\(wait) left)")
            return .repeatedAttempts(retryAfter: wait)
        }
        let id = beginProcedure(makeProcedure(role: .initiator, on: connection, authenticated: authenticated, minimumKeySize: minimumKeySize),
                                on: connection)
        askAgent(on: connection) {
            let bonded = await self.bond(for: connection)
            let kept = bonded == nil ? await self.bondsAtLimit() : nil
            await self.answer(id: id, on: connection) { procedure in
                procedure.bonded = bonded
                if let kept { self.withoutBonding(&procedure, kept: kept, peer: connection.peer) }
                return procedure.start()
            }
        }
        return nil
    }

    /// The number of bonds kept, when it is ``SecurityManagerSettings/maximumBonds``: a
    /// pairing with a peer that has none then goes without bonding. Counted in the store, which
    /// the app or another process may have filled (the bonds this host knows of when it cannot
    /// be read).
    func bondsAtLimit() async -> Int? {
        let local = localAddress
        let stored = try? await settledBondStore().readBonds().count { $0.localIdentity == local }
        // Counted after the await, with no suspension before the caller goes on: a bond another
        // pairing made meanwhile is remembered at once though saved later, so two pairings
        // finishing together cannot both take the last place.
        let kept = max(stored ?? 0, bondedPeers.count)
        return kept >= configuration.security.maximumBonds ? kept : nil
    }

    nonisolated func withoutBonding(_ procedure: inout PairingProcedure, kept: Int, peer: DeviceAddress) {
        guard procedure.settings.bondable else { return }
        logger.warning("this host keeps \(kept) bonds, its most (SecurityManagerSettings.maximumBonds): the pairing with \(peer), which has no bond, goes without bonding")
        procedure.declineBonding()
    }

    /// Who a pairing on this link is with, for Repeated Attempts: the peer's identity when
    /// known (resolved with a bond's IRK, or distributed on this link), else its address.
    func pairingClaimant(_ connection: Connection) -> DeviceAddress {
        connection.identity ?? addressResolver.identity(of: connection.peer) ?? DeviceAddress(connection.peer.address, type: connection.peer.type.base)
    }

    /// How long a new pairing on this link must still wait (Part H, 2.3.6), if at all.
    func pairingAttemptWait(_ connection: Connection) -> Duration? {
        pairingAttempts.wait(for: pairingClaimant(connection), now: configuration.clock.now)
    }

    /// Counts a failed pairing for Repeated Attempts: against its claimant, and across all
    /// peers when it gave a guess at a secret (``PairingProcedure/gaveGuessAtSecret``).
    func countFailedPairing(on connection: Connection, gaveGuessAtSecret: Bool) {
        pairingAttempts.failed(pairingClaimant(connection), gaveGuessAtSecret: gaveGuessAtSecret,
                               now: configuration.clock.now, settings: configuration.security)
    }

    /// How long no Passkey Entry pairing may run (the budget of guesses is spent), for a
    /// procedure about to choose its method: the initiator's with the Pairing Response, the
    /// responder's with the Pairing Request its agent accepted (the only two places it does).
    func closingPasskeyEntry(_ procedure: inout PairingProcedure) {
        procedure.passkeyEntryClosed = pairingAttempts.passkeyEntryWait(now: configuration.clock.now, settings: configuration.security,
                                                                         running: runningPasskeyPairings)
    }

    /// Passkey Entry pairings under way on the links (the one choosing its method has not
    /// chosen yet): each may still end as a failed guess.
    private var runningPasskeyPairings: Int {
        links.values.count { link in
            guard let procedure = link.security?.procedure, case .passkeyEntry = procedure.method else { return false }
            return !procedure.isFinished && procedure.phase != .idle && procedure.phase != .awaitingResponse
        }
    }

    /// Installs a new procedure for the link and starts its Security Manager Timer.
    private func beginProcedure(_ procedure: PairingProcedure, on connection: Connection) -> UInt64 {
        let id = makeIdentifier()
        var session = links[connection.handle]?.security ?? SecuritySession()
        session.procedure = procedure
        session.procedureID = id
        session.isFinishing = false
        links[connection.handle]?.security = session
        restartSecurityTimer(connection.handle)
        return id
    }

    private func currentProcedure(_ handle: UInt16, id: UInt64) -> PairingProcedure? {
        guard let session = links[handle]?.security, session.procedureID == id, let procedure = session.procedure,
              !procedure.isFinished else { return nil }
        return procedure
    }

    func makeProcedure(role: PairingProcedure.Role, on connection: Connection, authenticated: Bool = false,
                       minimumKeySize: Int? = nil) -> PairingProcedure {
        // c1 and f5/f6 take the addresses over the air; the identity distributed is the identity
        // address (public, or static random on a controller without a public address).
        let local = connection.local
        let peer = DeviceAddress(connection.peer.address, type: connection.peer.type.base)
        // MITM protection when the caller asked for it, or (peripheral) the app's Security
        // Request did: the AuthReq says so, and a pairing without it fails.
        let requested = authenticated || links[connection.handle]?.security?.requestedAuthentication == true
        var settings = configuration.security.requiringAuthentication(requested)
        if let minimumKeySize { settings.minimumKeySize = min(max(settings.minimumKeySize, minimumKeySize), settings.maximumKeySize) }
        return PairingProcedure(role: role, settings: settings,
                                initiatorAddress: role == .initiator ? local : peer,
                                responderAddress: role == .initiator ? peer : local,
                                localIdentity: localAddress, localIdentityResolvingKey: localIdentityResolvingKey,
                                localOutOfBand: localOutOfBand, peerOutOfBand: peerOutOfBand[connection.peer.address],
                                legacyOutOfBandKey: (peerLegacyOutOfBand[connection.peer.address] ?? localLegacyOutOfBand)?.temporaryKey)
    }

    /// This device's identity: ``LEHost/identityAddress``, the controller's public address or
    /// the static random address used on a controller without one (a link's own address over
    /// the air is ``Connection/local``).
    var localAddress: DeviceAddress {
        identity?.address ?? DeviceAddress(controllerInfo?.address ?? .zero, type: .public)
    }

    func sendSecurityManager(_ pdu: SMPPDU, on connection: Connection) {
        logger.debug("SMP to \(connection.peer): \(pdu)")
        connection.link.send(pdu.encode(), channel: .securityManager)
    }

    // MARK: Actions

    func perform(_ actions: [PairingProcedure.Action], on connection: Connection) {
        guard let session = links[connection.handle]?.security else { return }
        let id = session.procedureID
        // This device's OOB data is used up by the pairing whose peer proves it holds it, not by
        // an attempt: a peer that says it has the data and has not fails (Confirm Value or DHKey
        // Check Failed) and must not take it from the peer it was made for. A failed attempt
        // tells nothing usable about a 128-bit TK or OOB random.
        if let procedure = session.procedure, procedure.peerPassedChecks {
            if procedure.usedLocalOutOfBand, let local = localOutOfBand, procedure.keyPair?.publicKeyX == local.keyPair.publicKeyX {
                logger.info("this device's OOB data served the pairing with \(connection.peer); make new data for another")
                localOutOfBand = nil
            }
            if procedure.usedLegacyOutOfBand, let local = localLegacyOutOfBand, procedure.legacyOutOfBandKey == local.temporaryKey {
                logger.info("this device's legacy OOB data served the pairing with \(connection.peer); make new data for another")
                localLegacyOutOfBand = nil
            }
        }
        for action in actions {
            switch action {
            case let .send(pdu):
                sendSecurityManager(pdu, on: connection)
                // Part H, 3.4: the timer restarts when a PDU is queued for transmission.
                restartSecurityTimer(connection.handle)
            case let .prompt(prompt):
                ask(prompt, id: id, on: connection)
            case let .askReplacement(replacement):
                let (agent, peer) = (pairingAgent, connection.peer)
                logger.notice("\(replacement): asking the pairing agent")
                askAgent(on: connection) {
                    let allowed = await agent.shouldReplaceBond(replacement, for: peer)
                    await self.answer(id: id, on: connection) { $0.replacementAnswered(allowed) }
                }
            case let .encrypt(key, ediv, rand):
                startEncryption(key: key, ediv: ediv, rand: rand, id: id, on: connection)
            case let .complete(outcome):
                pairingSucceeded(outcome, checkedBeforeKeys: links[connection.handle]?.security?.procedure?.replacement, on: connection)
            case let .fail(failure):
                pairingFailed(failure, on: connection)
            case let .keypress(type):
                deliverKeypress(type, id: id, on: connection)
            }
        }
    }

    private func ask(_ prompt: PairingPrompt, id: UInt64, on connection: Connection) {
        let agent = pairingAgent
        let peer = connection.peer
        logger.info("pairing with \(peer): \(prompt)")
        switch prompt {
        case let .displayPasskey(passkey):
            askAgent(on: connection) { await agent.display(passkey: passkey, for: peer) }
        case .enterPasskey:
            askAgent(on: connection) {
                let passkey = await agent.passkey(for: peer)
                await self.answer(id: id, on: connection) { $0.passkeyEntered(passkey) }
            }
        case let .confirmNumber(number):
            askAgent(on: connection) {
                let matches = await agent.confirm(number: number, for: peer)
                await self.answer(id: id, on: connection) { $0.numberConfirmed(matches) }
            }
        }
    }

    /// A Keypress Notification for the agent, in the order they came: each waits for the one
    /// before (at most ``PairingProcedure/maximumKeypresses`` per pairing, ended with it).
    private func deliverKeypress(_ type: SMPKeypressNotificationType, id: UInt64, on connection: Connection) {
        let (agent, peer) = (pairingAgent, connection.peer)
        let previous = links[connection.handle]?.security?.lastKeypress
        logger.debug("\(peer): \(type)")
        let task = Task {
            await previous?.value
            guard !Task.isCancelled else { return }
            await agent.keypress(type, for: peer)
        }
        links[connection.handle]?.security?.lastKeypress = task
        links[connection.handle]?.security?.agentTasks.append(task)
    }

    /// Runs a question to the agent for the link's pairing in a task that ends with it: when
    /// the pairing ends (the Security Manager Timer included) the task is cancelled and a late
    /// answer is dropped by procedure id.
    private func askAgent(on connection: Connection, _ question: @escaping @Sendable () async -> Void) {
        let task = Task { await question() }
        links[connection.handle]?.security?.agentTasks.append(task)
    }

    /// Cancels the questions the link's pairing still has out.
    func endAgentQuestions(_ handle: UInt16) {
        for task in links[handle]?.security?.agentTasks ?? [] { task.cancel() }
        links[handle]?.security?.agentTasks = []
    }

    private func answer(id: UInt64, on connection: Connection, _ feed: (inout PairingProcedure) -> [PairingProcedure.Action]) {
        guard var procedure = currentProcedure(connection.handle, id: id) else { return }
        let actions = feed(&procedure)
        links[connection.handle]?.security?.procedure = procedure
        perform(actions, on: connection)
    }

    private func startEncryption(key: UInt128, ediv: UInt16, rand: UInt64, id: UInt64, on connection: Connection) {
        if let procedure = links[connection.handle]?.security?.procedure {
            connection.gatt.bearer.expectEncryption(Self.encryptionSecurity(of: procedure))
        }
        let command = LEEnableEncryptionCommand(connectionHandle: connection.handle, randomNumber: rand, encryptedDiversifier: ediv,
                                                longTermKey: SMPKeyBytes.littleEndian(key))
        Task {
            do {
                _ = try await self.send(command)
            } catch {
                connection.gatt.bearer.expectEncryption(nil)
                self.logger.warning("LE Enable Encryption on \(connection.peer) failed: \(error)")
                self.answer(id: id, on: connection) { $0.encryptionChanged(success: false) }
            }
        }
    }

    /// The pairing completed on this side. A bonding pairing's keys are stored, unless the
    /// identity the peer distributed is bonded to stronger keys and the agent does not allow
    /// the replacement (see ``keep(_:outcome:existing:checkedBeforeKeys:on:)``).
    private func pairingSucceeded(_ outcome: PairingOutcome, checkedBeforeKeys: BondReplacement?, on connection: Connection) {
        let handle = connection.handle
        stopSecurityTimer(handle)
        if let dropped = outcome.droppedIdentityAddress {
            logger.warning("\(connection.peer) distributed the identity address \(dropped), which is not its own: identity and IRK ignored, the bond stays under \(connection.peer)")
        }
        endAgentQuestions(handle)
        guard outcome.isBonding else {
            finishPairing(outcome, bond: nil, saved: nil, on: connection)
            return
        }
        let bond = makeBond(outcome, peer: connection.peer)
        links[handle]?.security?.isFinishing = true
        Task {
            let existing = await self.settledBondStore().bond(local: bond.localIdentity, peer: bond.peerIdentity)
            await self.keep(bond, outcome: outcome, existing: existing, checkedBeforeKeys: checkedBeforeKeys, on: connection)
        }
    }

    /// Stores a bonding pairing's keys, or refuses them. The identity is known only now, from
    /// Identity Address Information (Part H, 3.6.4): when it is bonded with keys the new ones
    /// would weaken, and the agent was not already asked about that bond before the keys were
    /// exchanged, the agent decides (refusing by default). Refused, the bond stays as it was,
    /// the pairing fails with ``PairingFailure/weakerThanBond(_:)`` and the link, encrypted
    /// with keys of a device that is not the bonded one, is ended with Authentication Failure.
    private func keep(_ bond: Bond, outcome: PairingOutcome, existing: Bond?, checkedBeforeKeys: BondReplacement?,
                      on connection: Connection) async {
        let bond = withoutAnotherBondsIRK(bond, peer: connection.peer)
        if existing == nil, let kept = await bondsAtLimit() {
            // Two pairings with new peers that ran together, the store holding one short of the
            // limit at their start: the later keeps its keys for this link only.
            logger.warning("this host keeps \(kept) bonds, its most (SecurityManagerSettings.maximumBonds): the keys of the pairing with \(connection.peer) are not stored")
            var unkept = outcome
            unkept.isBonding = false
            finishPairing(unkept, bond: nil, saved: nil, on: connection)
            return
        }
        let replacement = BondReplacement.afterKeyDistribution(existing: existing, proposed: outcome.strength, checkedBeforeKeys: checkedBeforeKeys)
        if let replacement, replacement.needsConsentAfterKeys {
            let (agent, peer) = (pairingAgent, connection.peer)
            logger.notice("\(replacement): asking the pairing agent")
            let allowed = await boundedAnswer(fallback: false) { await agent.shouldReplaceBond(replacement, for: peer) }
            guard allowed else {
                refuseReplacement(replacement, on: connection)
                return
            }
        }
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
        rememberBond(bond)
        // Links still encrypted with the replaced bond's key stand for the identity no more, as
        // after removeBond: the key that identity is known by is this pairing's now.
        if existing != nil { untrustLinks(encryptedWith: bond.peerIdentity, except: connection) }
        // A new bond starts with no GATT client state: what the server kept for an earlier bond
        // under this identity (its subscriptions, what waited for it) is not this peer's to take.
        // (After the save is pending: a link that loads the state meanwhile reads the new bond.)
        await server.forgetClient(bond.peerIdentity)
        if let replacement {
            logger.notice("\(connection.peer) replaced the bond with \(replacement.identity): \(replacement.bonded) → \(replacement.proposed)")
            broadcast(.bondReplaced(connection, replacement))
            let (agent, peer) = (pairingAgent, connection.peer)
            Task { await agent.bondReplaced(replacement, for: peer) }
        }
        finishPairing(outcome, bond: bond, saved: save, on: connection)
    }

    /// `bond`, without its peer's IRK when another bonded identity has that IRK already. IRKs
    /// are random 128-bit keys: two devices never share one by chance. A device that has one of
    /// another's does so because that device bonded with it and gave it its IRK (Part H, 3.6.4),
    /// and if this host took it under the new identity, the other device's private addresses
    /// would resolve to either identity (to the one the lookup meets first): an accessory could
    /// make a phone that had bonded with it unknown here. The bond with the IRK first stays
    /// whole; the new one keeps its keys and identity, and is found by its identity address only.
    private func withoutAnotherBondsIRK(_ bond: Bond, peer: DeviceAddress) -> Bond {
        guard let irk = bond.peerKeys.identityResolvingKey,
              let holder = addressResolver.identity(havingIRK: irk, besides: bond.peerIdentity) else { return bond }
        logger.warning("\(peer) distributed the IRK of the bond with \(holder) as that of \(bond.peerIdentity): the IRK is not kept; the bond with \(bond.peerIdentity) is kept without it")
        var kept = bond
        kept.peerKeys.identityResolvingKey = nil
        return kept
    }

    /// `bond`: the bond kept for this pairing, whose identity the link's key now stands for
    /// (``LinkSecurity/bondIdentity``); `nil` for a pairing without bonding.
    private func finishPairing(_ outcome: PairingOutcome, bond: Bond?, saved: Task<Void, Never>?, on connection: Connection) {
        let handle = connection.handle
        pairingAttempts.succeeded(pairingClaimant(connection))
        var security = outcome.security
        security.bondIdentity = bond.map { DeviceAddress($0.peerIdentity.address, type: $0.peerIdentity.type.base) }
        connection.gatt.bearer.setSecurity(security)
        // The GATT client on the link is the bond's peer now: the server keeps its state with the bond.
        if bond != nil { server.linkEncrypted(connection.gatt.bearer) }
        // The bond was kept across awaits (the store, the agent): the link may have ended and
        // its handle gone to a new link, whose session and callers are not this pairing's.
        let isLinkUp = isCurrent(connection)
        if isLinkUp {
            links[handle]?.security?.announcedSecurity = security
            links[handle]?.security?.isFinishing = true
        }
        logger.info("paired with \(connection.peer): \(outcome.method), \(security)\(isLinkUp ? "" : " (the link has ended since)")")
        broadcast(.securityChanged(connection, security))
        broadcast(.pairingFinished(connection, .success(outcome)))
        // The callers of pair() learn the outcome once the bond is stored and this device's
        // last key distribution PDUs have left the controller (Number Of Completed Packets): an
        // app that disconnects as soon as pair() returns would otherwise cut them, and the peer
        // would discard the incomplete bond (Bumble does). Bounded by the Security Manager
        // Timer's time, for a controller that stopped reporting.
        let (controller, procedureID) = (controller, links[handle]?.security?.procedureID)
        Task {
            await saved?.value
            await self.boundedAnswer(fallback: ()) { await controller.waitUntilDelivered(connectionHandle: handle) }
            // Only this pairing's callers: not a later link's on the handle, nor a later pairing's.
            guard self.isCurrent(connection), self.links[handle]?.security?.procedureID == procedureID else { return }
            self.links[handle]?.security?.isFinishing = false
            self.resolveSecurityWaiters(handle, with: .success(security))
        }
        let agent = pairingAgent
        Task { await agent.pairingFinished(with: connection.peer, result: .success(outcome)) }
        addressingBlockerEnded()
    }

    private func refuseReplacement(_ replacement: BondReplacement, on connection: Connection) {
        let failure = PairingFailure.weakerThanBond(replacement)
        logger.warning("\(connection.peer): \(failure); the link is dropped")
        // The peer passed the pairing's checks: it guessed nothing.
        countFailedPairing(on: connection, gaveGuessAtSecret: false)
        broadcast(.pairingFinished(connection, .failure(failure)))
        if isCurrent(connection) {
            links[connection.handle]?.security?.isFinishing = false
            resolveSecurityWaiters(connection.handle, with: .failure(.pairingFailed(failure)))
        }
        let agent = pairingAgent
        Task { await agent.pairingFinished(with: connection.peer, result: .failure(failure)) }
        Task { try? await self.disconnect(connection, reason: .authenticationFailure) }
    }

    private func pairingFailed(_ failure: PairingFailure, on connection: Connection) {
        let handle = connection.handle
        stopSecurityTimer(handle)
        endAgentQuestions(handle)
        if failure == .timeout { links[handle]?.security?.isHalted = true }
        // Part H, 2.3.6: the wait before the next pairing with this claimant doubles; not for
        // the Repeated Attempts refusal itself (no attempt was made).
        if !failure.isRepeatedAttemptsRefusal {
            countFailedPairing(on: connection, gaveGuessAtSecret: links[handle]?.security?.procedure?.gaveGuessAtSecret ?? false)
        }
        logger.info("pairing with \(connection.peer) failed: \(failure)")
        broadcast(.pairingFinished(connection, .failure(failure)))
        resolveSecurityWaiters(handle, with: .failure(.pairingFailed(failure)))
        let agent = pairingAgent
        Task { await agent.pairingFinished(with: connection.peer, result: .failure(failure)) }
        // An address change held back by this pairing may go now.
        addressingBlockerEnded()
    }

    /// The agent's answer to a question asked outside a running pairing (a Security Request,
    /// a claimed identity), or any other wait of the Security Manager's, or `fallback` once the
    /// Security Manager Timer's time passed: an agent that never answers holds nothing up.
    func boundedAnswer<T: Sendable>(fallback: T, _ question: @escaping @Sendable () async -> T) async -> T {
        let clock = configuration.clock
        let deadline = clock.now + configuration.security.timeout
        let first = FirstAnswer<T>()
        return await withCheckedContinuation { continuation in
            first.wait(continuation)
            let asking = Task { first.resume(await question()) }
            first.onTimeout(Task {
                try? await clock.sleep(until: deadline)
                if first.resume(fallback) { asking.cancel() }
            })
        }
    }

    // MARK: Security Manager Timer

    /// Restarts the 30-second timer of the link's pairing (Part H, 3.4): when the pairing
    /// starts and when this device queues one of its PDUs, never for what the peer sends. One
    /// timer task per pairing re-arms itself until the deadline holds.
    func restartSecurityTimer(_ handle: UInt16) {
        guard links[handle]?.security?.procedure != nil else { return }
        let deadline = configuration.clock.now + configuration.security.timeout
        links[handle]?.security?.deadline = deadline
        guard links[handle]?.security?.timer == nil, let id = links[handle]?.security?.procedureID else { return }
        let clock = configuration.clock
        links[handle]?.security?.timer = Task {
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
        guard let session = links[handle]?.security, session.procedureID == id else { return nil }
        return session.deadline
    }

    private func securityTimerExpired(_ handle: UInt16, id: UInt64) {
        links[handle]?.security?.timer = nil
        guard var procedure = currentProcedure(handle, id: id), let connection = connection(handle) else { return }
        logger.warning("pairing with \(connection.peer) timed out")
        let actions = procedure.timedOut()
        links[handle]?.security?.procedure = procedure
        perform(actions, on: connection)
    }

    func stopSecurityTimer(_ handle: UInt16) {
        links[handle]?.security?.timer?.cancel()
        links[handle]?.security?.timer = nil
        links[handle]?.security?.deadline = nil
    }
}

/// 128-bit keys as HCI carries them: 16 octets, least significant first.
enum SMPKeyBytes {
    static func littleEndian(_ key: UInt128) -> [UInt8] {
        ByteWriter.littleEndianBytes(of: key)
    }
}
