import BluetoothCore

/// Signed writes (Core 6.0, Vol 3, Part H, 2.4.5 and Part C, 10.4): the host gives its
/// clients a signer and its server a verifier, both reading the bond store.
///
/// ``BondKeys/signCounter`` is the next SignCounter: in ``Bond/localKeys`` the one this
/// device's next signed write uses, in ``Bond/peerKeys`` the lowest the server accepts from
/// the peer. Both start at 0 when the CSRK is distributed. Each signed write made or accepted
/// saves the bond with the counter advanced, in order with the other bond saves, before the
/// write goes out or is carried out, so a counter is never used (or accepted) twice, across
/// runs too. A signer refuses when the save fails; SignCounter 0xFFFFFFFF is never used
/// (the key is then spent: pair again).
extension LEHost {
    /// Gives the server its verifier and every new ATT bearer its signer (at power-on).
    func installSigning() async {
        l2cap.signedWriteSigner.withLock { signer in
            signer = { [weak self] peer in
                guard let self else { throw HostError.notPoweredOn }
                return try await self.reserveSignedWrite(to: peer)
            }
        }
        await server.setSignedWriteVerifier { [weak self] peer, command in
            guard let self else { return .noKey }
            return await self.verifySignedWrite(command, from: peer)
        }
    }

    /// The CSRK this device distributed to `peer` and the next SignCounter, which is saved
    /// advanced before this returns.
    func reserveSignedWrite(to peer: DeviceAddress) async throws -> SignedWriteKey {
        try await signingGate.enter()
        defer { signingGate.leave() }
        guard var bond = await bond(forAddress: peer), let key = bond.localKeys.signatureKey else {
            throw HostError.unsupported("signed writes to \(peer): this device distributed no signature key (CSRK) to it")
        }
        let counter = bond.localKeys.signCounter
        guard counter < UInt32.max else {
            throw HostError.unsupported("signed writes to \(peer): every SignCounter of the key is used; pair again")
        }
        bond.localKeys.signCounter = counter + 1
        if let error = await saveInOrder(bond) {
            throw HostError.unsupported("signed writes to \(peer): the SignCounter cannot be stored (\(error))")
        }
        return SignedWriteKey(key: key, signCounter: counter)
    }

    /// Checks a Signed Write Command from `peer` against the CSRK it distributed and the
    /// lowest SignCounter still accepted, and stores the counter of one accepted.
    func verifySignedWrite(_ command: ATTSignedWriteCommand, from peer: DeviceAddress) async -> SignedWriteVerdict {
        do { try await signingGate.enter() } catch { return .noKey }
        defer { signingGate.leave() }
        guard var bond = await bond(forAddress: peer), let key = bond.peerKeys.signatureKey else { return .noKey }
        // The MAC first: a forged PDU learns nothing of the counter.
        guard command.isSigned(by: key) else { return .badSignature }
        let lowest = bond.peerKeys.signCounter
        guard command.signCounter >= lowest, command.signCounter < UInt32.max else {
            return .staleCounter(received: command.signCounter, lowestAccepted: lowest)
        }
        bond.peerKeys.signCounter = command.signCounter + 1
        if let error = await saveInOrder(bond) {
            // Carried out still (the signature is right), but a replay after a restart
            // could pass: say so.
            logger.error("could not store the SignCounter of \(bond.peerIdentity): \(error)")
        }
        return .accepted(security: LinkSecurity(isEncrypted: true, isAuthenticated: bond.isAuthenticated,
                                                isSecureConnections: bond.isSecureConnections, keySize: bond.keySize, isBonded: true))
    }

    /// Saves a bond after the saves already under way; returns the store's error, if any.
    private func saveInOrder(_ bond: Bond) async -> (any Error)? {
        let previous = pendingBondSave
        let store = configuration.bondStore
        let save = Task<(any Error)?, Never> {
            await previous?.value
            do {
                try await store.save(bond)
                return nil
            } catch {
                return error
            }
        }
        pendingBondSave = Task { _ = await save.value }
        return await save.value
    }
}
