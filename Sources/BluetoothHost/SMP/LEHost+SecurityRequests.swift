import BluetoothCore

/// Central: a peripheral's Security Requests (Core 6.0, Vol 3, Part H, 2.4.6 and 3.6.7).
///
/// Each one may make the host ask its agent, so they are bounded per link: one is answered at a
/// time (repeats while it is answered are dropped), a new one is taken at most every
/// ``SecurityManagerSettings/securityRequestInterval`` on the host's clock, and within the
/// Repeated Attempts back-off it gets Pairing Failed, Repeated Attempts (Part H, 2.3.6).
extension LEHost {
    func receiveSecurityRequest(_ authReq: SMPAuthenticationRequirements, on connection: Connection) {
        let handle = connection.handle
        let now = configuration.clock.now
        var session = links[handle]?.security ?? SecuritySession()
        if session.securityRequestPending {
            logger.debug("Security Request from \(connection.peer) dropped: the previous one is being answered")
            return
        }
        if let last = session.lastSecurityRequest, now < last + configuration.security.securityRequestInterval {
            logger.debug("Security Request from \(connection.peer) dropped: another came \(now - last) ago")
            return
        }
        if let wait = pairingAttemptWait(connection), !hasUsableBond(connection) {
            logger.info("Security Request from \(connection.peer) within its back-off (\(wait) left): Repeated Attempts")
            sendSecurityManager(.pairingFailed(.repeatedAttempts), on: connection)
            session.lastSecurityRequest = now
            links[handle]?.security = session
            return
        }
        session.securityRequestPending = true
        session.lastSecurityRequest = now
        links[handle]?.security = session
        Task {
            await self.answerSecurityRequest(authReq, on: connection)
            self.links[handle]?.security?.securityRequestPending = false
        }
    }

    /// Whether the peer is known to be bonded (the bond itself is looked up when answering).
    private func hasUsableBond(_ connection: Connection) -> Bool {
        bondedPeers.contains(connection.peerIdentity) || addressResolver.identity(of: connection.peer) != nil
    }

    /// With a bond good enough for what the peripheral asks (and for Secure Connections Only
    /// mode), encrypt with it; else pair, if the agent accepts within the Security Manager
    /// Timer (an agent that never answers is a refusal).
    private func answerSecurityRequest(_ authReq: SMPAuthenticationRequirements, on connection: Connection) async {
        guard isCurrent(connection) else { return }
        if let running = links[connection.handle]?.security?.procedure, !running.isFinished { return }
        // A link still encrypted with a removed bond's key is not secure: pair again.
        let security = connection.security
        if security.isEncrypted && !security.isBondRemoved && (security.isAuthenticated || !authReq.contains(.mitm)) { return }
        let bond = await bond(for: connection)
        guard isCurrent(connection) else { return }
        if let bond, let key = bond.peerKeys.longTermKey,
           bond.isAuthenticated || !authReq.contains(.mitm), configuration.security.accepts(bond) {
            encrypt(with: bond, key: key, allowPairing: true, on: connection)
            return
        }
        let (agent, peer) = (pairingAgent, connection.peer)
        let accepted = await boundedAnswer(fallback: false) { await agent.shouldAcceptPairing(with: peer) }
        guard isCurrent(connection) else { return }
        guard accepted else {
            sendSecurityManager(.pairingFailed(.pairingNotSupported), on: connection)
            return
        }
        if let refused = startPairing(on: connection), case .repeatedAttempts = refused {
            sendSecurityManager(.pairingFailed(.repeatedAttempts), on: connection)
        }
    }
}
