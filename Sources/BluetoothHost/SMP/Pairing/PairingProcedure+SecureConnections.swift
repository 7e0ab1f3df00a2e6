import BluetoothCore
import BluetoothCrypto

/// Phase 2 of LE Secure Connections pairing (Core 6.0, Vol 3, Part H, 2.3.5.6): P-256 public
/// keys, then authentication stage 1 (Just Works / Numeric Comparison, or 20 rounds of Passkey
/// Entry), then stage 2: the DHKey checks Ea and Eb under the MacKey from f5, and encryption
/// with the LTK from f5.
extension PairingProcedure {
    mutating func scBegin() -> [Action] {
        // The OOB data's key pair only when the peer has the data (its commitment is to that
        // key); any other pairing gets a key pair of its own.
        let peerHasOurs = method == .outOfBand && (role == .initiator ? response : request)?.oobDataPresent == true
        let keys: SecureConnectionsKeyPair
        if peerHasOurs, let local = localOutOfBand {
            keys = local.keyPair
            usedLocalOutOfBand = true
        } else {
            keys = keyPair ?? SecureConnectionsKeyPair()
        }
        keyPair = keys
        var actions: [Action] = []
        if case .passkeyEntry = method { actions += passkeyPrompt() }
        moveTo(.scAwaitingPublicKey)
        if role == .initiator { actions.append(.send(.pairingPublicKey(localPublicKey(keys)))) }
        return actions
    }

    private func localPublicKey(_ keys: SecureConnectionsKeyPair) -> SMPPublicKey {
        SMPPublicKey(mostSignificantFirstX: keys.publicKeyX, y: keys.publicKeyY)
    }

    /// The initiator's and the responder's public key X coordinates, most significant octet first.
    private var pkaX: [UInt8] { role == .initiator ? keyPair?.publicKeyX ?? [] : peerPublicKey.map { $0.x.reversed() } ?? [] }
    private var pkbX: [UInt8] { role == .responder ? keyPair?.publicKeyX ?? [] : peerPublicKey.map { $0.x.reversed() } ?? [] }
    private var initiatorNonce: UInt128 { role == .initiator ? localNonce : peerNonce }
    private var responderNonce: UInt128 { role == .responder ? localNonce : peerNonce }

    /// The bit of the passkey for this round: 0x80 | bit (Vol 3, Part H, 2.3.5.6.3).
    private var passkeyBit: UInt8 { 0x80 | UInt8(((passkey ?? 0) >> UInt32(passkeyRound)) & 1) }

    private var isPasskeyEntry: Bool {
        if case .passkeyEntry = method { return true }
        return false
    }

    mutating func scReceivePublicKey(_ key: SMPPublicKey) -> [Action] {
        guard let keys = keyPair else { return fail(.unspecifiedReason, .unexpectedPDU(.pairingPublicKey)) }
        peerPublicKey = key
        do {
            dhKey = try keys.dhKey(peerX: key.x.reversed(), peerY: key.y.reversed())
        } catch .publicKeyEqualsOwn {
            return fail(.unspecifiedReason, .invalidPublicKey)
        } catch {
            // A point off the curve (the invalid-curve attack): no DHKey can be trusted.
            return fail(.dhKeyCheckFailed, .invalidPublicKey)
        }
        var actions: [Action] = []
        if role == .responder { actions.append(.send(.pairingPublicKey(localPublicKey(keys)))) }
        passkeyRound = 0
        if method == .outOfBand { return actions + scOutOfBandBegin(peerX: key.x.reversed()) }
        if isPasskeyEntry {
            moveTo(.scAwaitingCommitment)
            if role == .initiator, passkey != nil { actions += scSendPasskeyCommitment() }
            return actions
        }
        if role == .responder {
            // Just Works / Numeric Comparison: the responder commits first, Cb = f4(PKbx, PKax, Nb, 0).
            localNonce = random.next128()
            moveTo(.scAwaitingNonce)
            actions.append(.send(.pairingConfirm(confirmValue: SecurityToolbox.f4(u: pkbX, v: pkaX, x: localNonce, z: 0))))
        } else {
            moveTo(.scAwaitingCommitment)
        }
        return actions
    }

    mutating func scPasskeyKnown() -> [Action] {
        guard phase == .scAwaitingCommitment else { return [] }
        if role == .initiator { return localCommitted ? [] : scSendPasskeyCommitment() }
        return peerCommitment == nil ? [] : scSendPasskeyCommitment()
    }

    /// Passkey Entry round: Cai = f4(PKax, PKbx, Nai, rai) or Cbi = f4(PKbx, PKax, Nbi, rbi).
    private mutating func scSendPasskeyCommitment() -> [Action] {
        localNonce = random.next128()
        localCommitted = true
        let value = role == .initiator ? SecurityToolbox.f4(u: pkaX, v: pkbX, x: localNonce, z: passkeyBit)
            : SecurityToolbox.f4(u: pkbX, v: pkaX, x: localNonce, z: passkeyBit)
        if role == .responder { moveTo(.scAwaitingNonce) }
        return [.send(.pairingConfirm(confirmValue: value))]
    }

    mutating func scReceiveCommitment(_ value: UInt128) -> [Action] {
        guard peerCommitment == nil else { return fail(.unspecifiedReason, .unexpectedPDU(.pairingConfirm)) }
        if role == .initiator {
            // In Passkey Entry the initiator commits first in each round.
            guard !isPasskeyEntry || localCommitted else { return fail(.unspecifiedReason, .unexpectedPDU(.pairingConfirm)) }
            peerCommitment = value
            if !isPasskeyEntry { localNonce = random.next128() }
            moveTo(.scAwaitingNonce)
            return [.send(.pairingRandom(randomValue: localNonce))]
        }
        // A responder waits for a commitment only in Passkey Entry.
        guard isPasskeyEntry else { return fail(.unspecifiedReason, .unexpectedPDU(.pairingConfirm)) }
        peerCommitment = value
        return passkey == nil ? [] : scSendPasskeyCommitment()
    }

    /// OOB: check the peer's commitment to the key it just sent, if we have its data; then the
    /// initiator sends Na (no commitments over the air, Vol 3, Part H, 2.3.5.6.4).
    private mutating func scOutOfBandBegin(peerX: [UInt8]) -> [Action] {
        if let peerData = peerOutOfBand,
           !SecurityToolbox.constantTimeEqual(peerData.confirm, SecurityToolbox.f4(u: peerX, v: peerX, x: peerData.random, z: 0)) {
            return fail(.confirmValueFailed, .confirmValueMismatch)
        }
        moveTo(.scAwaitingNonce)
        guard role == .initiator else { return [] }
        localNonce = random.next128()
        return [.send(.pairingRandom(randomValue: localNonce))]
    }

    mutating func scReceiveNonce(_ value: UInt128) -> [Action] {
        if isPasskeyEntry { return scReceivePasskeyNonce(value) }
        if method == .outOfBand {
            peerNonce = value
            if role == .responder {
                localNonce = random.next128()
                moveTo(.scAwaitingDHKeyCheck)
                return [.send(.pairingRandom(randomValue: localNonce))]
            }
            return scSendInitiatorDHKeyCheck()
        }
        peerNonce = value
        if role == .responder {
            moveTo(.scAwaitingDHKeyCheck)
            var actions: [Action] = [.send(.pairingRandom(randomValue: localNonce))]
            if method == .numericComparison { actions.append(.prompt(.confirmNumber(comparisonNumber))) }
            return actions
        }
        // The initiator checks the responder's commitment Cb = f4(PKbx, PKax, Nb, 0).
        guard let commitment = peerCommitment, SecurityToolbox.constantTimeEqual(commitment, SecurityToolbox.f4(u: pkbX, v: pkaX, x: value, z: 0)) else {
            return fail(.confirmValueFailed, .confirmValueMismatch)
        }
        if method == .numericComparison {
            moveTo(.scAwaitingConfirmation)
            return [.prompt(.confirmNumber(comparisonNumber))]
        }
        return scSendInitiatorDHKeyCheck()
    }

    /// Numeric Comparison: g2(PKax, PKbx, Na, Nb) mod 10^6 (Vol 3, Part H, 2.3.5.6.2).
    var comparisonNumber: UInt32 {
        SecurityToolbox.g2(u: pkaX, v: pkbX, x: initiatorNonce, y: responderNonce) % 1_000_000
    }

    private mutating func scReceivePasskeyNonce(_ value: UInt128) -> [Action] {
        let u = role == .initiator ? pkbX : pkaX
        let v = role == .initiator ? pkaX : pkbX
        guard let commitment = peerCommitment, SecurityToolbox.constantTimeEqual(commitment, SecurityToolbox.f4(u: u, v: v, x: value, z: passkeyBit)) else {
            return fail(.confirmValueFailed, .confirmValueMismatch)
        }
        peerNonce = value
        peerCommitment = nil
        localCommitted = false
        passkeyRound += 1
        var actions: [Action] = []
        if role == .responder { actions.append(.send(.pairingRandom(randomValue: localNonce))) }
        guard passkeyRound == 20 else {
            moveTo(.scAwaitingCommitment)
            if role == .initiator { actions += scSendPasskeyCommitment() }
            return actions
        }
        if role == .responder {
            moveTo(.scAwaitingDHKeyCheck)
            return actions
        }
        return scSendInitiatorDHKeyCheck()
    }

    mutating func scUserConfirmed() -> [Action] {
        if role == .initiator {
            guard phase == .scAwaitingConfirmation else { return [] }
            return scSendInitiatorDHKeyCheck()
        }
        guard let pending = pendingPeerDHKeyCheck else { return [] }
        pendingPeerDHKeyCheck = nil
        return scReceiveDHKeyCheck(pending)
    }

    // MARK: Authentication stage 2

    /// IOcap: AuthReq, OOB data flag, IO capability (Vol 3, Part H, 2.2.8).
    private static func ioCap(_ features: SMPPairingFeatures?) -> UInt32 {
        guard let features else { return 0 }
        return UInt32(features.authenticationRequirements.rawValue) << 16 | UInt32(features.oobDataPresent ? 1 : 0) << 8
            | UInt32(features.ioCapability.rawValue)
    }

    /// (MacKey, LTK) = f5(DHKey, Na, Nb, A, B), and the check values Ea and Eb.
    private mutating func stage2() -> (ea: UInt128, eb: UInt128) {
        let a = DeviceAddressBits(initiatorAddress).value
        let b = DeviceAddressBits(responderAddress).value
        let keys = SecurityToolbox.f5(w: dhKey, n1: initiatorNonce, n2: responderNonce, a1: a, a2: b)
        macKey = keys.macKey
        encryptionKey = masked(keys.ltk)
        let (ra, rb) = stage2Randoms
        let ea = SecurityToolbox.f6(w: macKey, n1: initiatorNonce, n2: responderNonce, r: rb, ioCap: Self.ioCap(request), a1: a, a2: b)
        let eb = SecurityToolbox.f6(w: macKey, n1: responderNonce, n2: initiatorNonce, r: ra, ioCap: Self.ioCap(response), a1: b, a2: a)
        return (ea, eb)
    }

    /// ra and rb of f6: the passkey for Passkey Entry; for OOB each device's own r, or 0 where
    /// the other side has no OOB data from it (Vol 3, Part H, 2.3.5.6.5); else 0.
    private var stage2Randoms: (ra: UInt128, rb: UInt128) {
        if isPasskeyEntry { return (UInt128(passkey ?? 0), UInt128(passkey ?? 0)) }
        guard method == .outOfBand else { return (0, 0) }
        let local = localOutOfBand?.random ?? 0
        let peer = peerOutOfBand?.random ?? 0
        let responderHasInitiators = response?.oobDataPresent == true
        let initiatorHasResponders = request?.oobDataPresent == true
        if role == .initiator {
            return (responderHasInitiators ? local : 0, initiatorHasResponders ? peer : 0)
        }
        return (responderHasInitiators ? peer : 0, initiatorHasResponders ? local : 0)
    }

    private mutating func scSendInitiatorDHKeyCheck() -> [Action] {
        let check = stage2()
        moveTo(.scAwaitingDHKeyCheck)
        return [.send(.pairingDHKeyCheck(dhKeyCheck: check.ea))]
    }

    mutating func scReceiveDHKeyCheck(_ value: UInt128) -> [Action] {
        if role == .responder && method == .numericComparison && !userConfirmed {
            // The responder's user has not answered yet: check Ea once they have.
            pendingPeerDHKeyCheck = value
            return []
        }
        if role == .initiator {
            let check = stage2()
            guard SecurityToolbox.constantTimeEqual(value, check.eb) else { return fail(.dhKeyCheckFailed, .dhKeyCheckMismatch) }
            moveTo(.awaitingEncryption)
            return [.encrypt(key: encryptionKey, ediv: 0, rand: 0)]
        }
        let check = stage2()
        guard SecurityToolbox.constantTimeEqual(value, check.ea) else { return fail(.dhKeyCheckFailed, .dhKeyCheckMismatch) }
        moveTo(.awaitingEncryption)
        return [.send(.pairingDHKeyCheck(dhKeyCheck: check.eb))]
    }
}

/// A device address as the 56 bits f5 and f6 take: the address type (0 public, 1 random) in
/// the most significant octet, then the 48-bit address (Vol 3, Part H, 2.2.7).
struct DeviceAddressBits {
    let value: UInt64
    init(_ address: DeviceAddress) {
        value = UInt64(address.type.base.rawValue) << 48 | address.address.rawValue
    }
}
