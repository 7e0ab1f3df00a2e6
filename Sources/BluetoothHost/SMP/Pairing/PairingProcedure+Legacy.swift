import BluetoothCrypto

/// Phase 2 of LE legacy pairing (Core 6.0, Vol 3, Part H, 2.3.5.5): both sides commit to a
/// random value with c1 under the TK, reveal it, and encrypt with STK = s1(TK, Srand, Mrand).
extension PairingProcedure {
    /// The Temporary Key: 0 for Just Works, the passkey for Passkey Entry, the 128-bit value
    /// exchanged out of band for OOB (Vol 3, Part H, 2.3.5.2 to 2.3.5.4); `nil` while the passkey
    /// is not known.
    var legacyTemporaryKey: UInt128? {
        switch method {
        case .justWorks: return 0
        case .outOfBand: return legacyOutOfBandKey
        case .passkeyEntry, .numericComparison: return passkey.map { UInt128($0) }
        }
    }

    mutating func legacyBegin() -> [Action] {
        var actions: [Action] = []
        if case .passkeyEntry = method { actions += passkeyPrompt() }
        if role == .initiator {
            guard legacyTemporaryKey != nil else {
                moveTo(.legacyAwaitingPasskey)
                return actions
            }
            return actions + legacySendInitiatorConfirm()
        }
        moveTo(.legacyAwaitingConfirm)
        return actions
    }

    mutating func legacyPasskeyKnown() -> [Action] {
        if role == .initiator { return legacySendInitiatorConfirm() }
        // The responder answers the initiator's confirm once it has the TK.
        return legacyPeerConfirm == nil ? [] : legacySendResponderConfirm()
    }

    /// The confirm value c1(TK, rand, preq, pres, iat, ia, rat, ra) (Vol 3, Part H, 2.2.3).
    func legacyConfirm(_ random: UInt128) -> UInt128 {
        guard let tk = legacyTemporaryKey, let request, let response else { return 0 }
        return SecurityToolbox.c1(k: tk, r: random, pairingRequest: SMPPDU.pairingRequest(request).encode(),
                                  pairingResponse: SMPPDU.pairingResponse(response).encode(),
                                  initiatorAddressType: initiatorAddress.type.base.rawValue,
                                  initiatorAddress: initiatorAddress.address.rawValue,
                                  responderAddressType: responderAddress.type.base.rawValue,
                                  responderAddress: responderAddress.address.rawValue)
    }

    private mutating func legacySendInitiatorConfirm() -> [Action] {
        legacyLocalRandom = random.next128()
        moveTo(.legacyAwaitingConfirm)
        return [.send(.pairingConfirm(confirmValue: legacyConfirm(legacyLocalRandom)))]
    }

    private mutating func legacySendResponderConfirm() -> [Action] {
        legacyLocalRandom = random.next128()
        moveTo(.legacyAwaitingRandom)
        return [.send(.pairingConfirm(confirmValue: legacyConfirm(legacyLocalRandom)))]
    }

    mutating func legacyReceiveConfirm(_ value: UInt128) -> [Action] {
        // The initiator sends its confirm first; one before it is out of order.
        guard legacyPeerConfirm == nil, role == .responder || phase == .legacyAwaitingConfirm else {
            return fail(.unspecifiedReason, .unexpectedPDU(.pairingConfirm))
        }
        legacyPeerConfirm = value
        if role == .initiator {
            moveTo(.legacyAwaitingRandom)
            return [.send(.pairingRandom(randomValue: legacyLocalRandom))]
        }
        guard legacyTemporaryKey != nil else {
            moveTo(.legacyAwaitingPasskey)
            return []
        }
        return legacySendResponderConfirm()
    }

    mutating func legacyReceiveRandom(_ value: UInt128) -> [Action] {
        guard let tk = legacyTemporaryKey, let peerConfirm = legacyPeerConfirm,
              SecurityToolbox.constantTimeEqual(legacyConfirm(value), peerConfirm) else {
            return fail(.confirmValueFailed, .confirmValueMismatch)
        }
        if role == .responder {
            // STK = s1(TK, Srand, Mrand) (Vol 3, Part H, 2.2.4).
            encryptionKey = masked(SecurityToolbox.s1(k: tk, r1: legacyLocalRandom, r2: value))
            moveTo(.awaitingEncryption)
            return [.send(.pairingRandom(randomValue: legacyLocalRandom))]
        }
        encryptionKey = masked(SecurityToolbox.s1(k: tk, r1: value, r2: legacyLocalRandom))
        moveTo(.awaitingEncryption)
        return [.encrypt(key: encryptionKey, ediv: 0, rand: 0)]
    }
}
