import BluetoothCore
@testable import BluetoothHost

/// Two pairing procedures wired together with no I/O: PDUs go through encode/decode, prompts
/// are answered from a script, and "encryption" succeeds when the central's key equals the
/// key the peripheral answers the LTK request with, as a controller would check.
/// Not a `TwoDevices`: it runs the SMP state machines alone, with no host, controller or link.
struct PairingHarness {
    var initiator: PairingProcedure
    var responder: PairingProcedure
    /// What each side asked its user.
    var initiatorPrompts: [PairingPrompt] = []
    var responderPrompts: [PairingPrompt] = []
    var initiatorResult: Result<PairingOutcome, PairingFailure>?
    var responderResult: Result<PairingOutcome, PairingFailure>?
    /// Every PDU in flight, as (from initiator?, pdu).
    var transcript: [(fromInitiator: Bool, pdu: SMPPDU)] = []
    /// Changes or drops a PDU in flight (`nil` drops it).
    var tamper: (_ fromInitiator: Bool, _ pdu: SMPPDU) -> SMPPDU? = { _, pdu in pdu }
    /// Answers to prompts: the passkey to type (default: the one the other side displays) and
    /// whether numbers match.
    var typedPasskey: ((_ displayed: UInt32?) -> UInt32?) = { $0 }
    var initiatorConfirms = true
    var responderConfirms = true
    /// Whether each side's agent allows a pairing to replace its bond with a weaker key, and
    /// the replacements each side asked about.
    var initiatorAllowsReplacement = false
    var responderAllowsReplacement = false
    var initiatorReplacements: [BondReplacement] = []
    var responderReplacements: [BondReplacement] = []
    var encryptionKeys: (initiator: UInt128?, responder: UInt128?) = (nil, nil)
    /// The Keypress Notifications each side passed on to its agent.
    var initiatorKeypresses: [SMPKeypressNotificationType] = []
    var responderKeypresses: [SMPKeypressNotificationType] = []

    static let central = DeviceAddress(BluetoothAddress(rawValue: 0xC0_11_22_33_44_55), type: .public)
    static let peripheral = DeviceAddress(BluetoothAddress(rawValue: 0xF0_66_77_88_99_AA), type: .random)

    /// - Parameters:
    ///   - addresses: each side's address over the air (default: each its identity,
    ///     ``central`` and ``peripheral``); each side distributes its identity.
    init(initiator initiatorSettings: SecurityManagerSettings, responder responderSettings: SecurityManagerSettings, seed: UInt64 = 1,
         outOfBand: (initiator: (local: LocalOutOfBand?, peer: OutOfBandData?), responder: (local: LocalOutOfBand?, peer: OutOfBandData?))? = nil,
         legacyOutOfBand: (initiator: UInt128?, responder: UInt128?) = (nil, nil),
         bonds: (initiator: Bond?, responder: Bond?) = (nil, nil),
         addresses: (initiator: DeviceAddress, responder: DeviceAddress) = (Self.central, Self.peripheral)) {
        initiator = PairingProcedure(role: .initiator, settings: initiatorSettings, initiatorAddress: addresses.initiator,
                                     responderAddress: addresses.responder, localIdentity: Self.central, localIdentityResolvingKey: 0x1111,
                                     random: PairingRandom(SeededRandomNumberGenerator(seed: seed)),
                                     localOutOfBand: outOfBand?.initiator.local, peerOutOfBand: outOfBand?.initiator.peer,
                                     legacyOutOfBandKey: legacyOutOfBand.initiator, bonded: bonds.initiator)
        responder = PairingProcedure(role: .responder, settings: responderSettings, initiatorAddress: addresses.initiator,
                                     responderAddress: addresses.responder, localIdentity: Self.peripheral, localIdentityResolvingKey: 0x2222,
                                     random: PairingRandom(SeededRandomNumberGenerator(seed: seed &+ 1)),
                                     localOutOfBand: outOfBand?.responder.local, peerOutOfBand: outOfBand?.responder.peer,
                                     legacyOutOfBandKey: legacyOutOfBand.responder, bonded: bonds.responder)
    }

    /// Runs the pairing to its end (or until nothing moves).
    mutating func run() {
        var queue: [(toInitiator: Bool, action: PairingProcedure.Action)] = initiator.start().map { (true, $0) }
        var steps = 0
        while !queue.isEmpty, steps < 10_000 {
            steps += 1
            let (atInitiator, action) = queue.removeFirst()
            for follow in perform(action, atInitiator: atInitiator) { queue.append(follow) }
        }
    }

    /// Carries out one side's action; returns the actions it causes, with the side they belong to.
    private mutating func perform(_ action: PairingProcedure.Action, atInitiator: Bool) -> [(Bool, PairingProcedure.Action)] {
        switch action {
        case let .send(pdu):
            transcript.append((atInitiator, pdu))
            guard let delivered = tamper(atInitiator, pdu), let decoded = try? SMPPDU.decode(delivered.encode()) else { return [] }
            if atInitiator { return responder.receive(decoded).map { (false, $0) } }
            return initiator.receive(decoded).map { (true, $0) }
        case let .prompt(prompt):
            if atInitiator { initiatorPrompts.append(prompt) } else { responderPrompts.append(prompt) }
            switch prompt {
            case .displayPasskey: return []
            case .enterPasskey:
                let typed = typedPasskey(atInitiator ? responder.passkey : initiator.passkey)
                if atInitiator { return initiator.passkeyEntered(typed).map { (true, $0) } }
                return responder.passkeyEntered(typed).map { (false, $0) }
            case .confirmNumber:
                if atInitiator { return initiator.numberConfirmed(initiatorConfirms).map { (true, $0) } }
                return responder.numberConfirmed(responderConfirms).map { (false, $0) }
            }
        case let .encrypt(key, ediv, rand):
            // The central asked its controller to encrypt; the peripheral's host answers the LTK request.
            let answer = responder.keyForEncryption(ediv: ediv, rand: rand)
            encryptionKeys = (key, answer)
            let success = answer == key
            return initiator.encryptionChanged(success: success).map { (true, $0) }
                + responder.encryptionChanged(success: success).map { (false, $0) }
        case let .askReplacement(replacement):
            if atInitiator {
                initiatorReplacements.append(replacement)
                return initiator.replacementAnswered(initiatorAllowsReplacement).map { (true, $0) }
            }
            responderReplacements.append(replacement)
            return responder.replacementAnswered(responderAllowsReplacement).map { (false, $0) }
        case let .complete(outcome):
            if atInitiator { initiatorResult = .success(outcome) } else { responderResult = .success(outcome) }
            return []
        case let .fail(failure):
            if atInitiator { initiatorResult = .failure(failure) } else { responderResult = .failure(failure) }
            return []
        case let .keypress(type):
            if atInitiator { initiatorKeypresses.append(type) } else { responderKeypresses.append(type) }
            return []
        }
    }

    var initiatorOutcome: PairingOutcome? { try? initiatorResult?.get() }
    var responderOutcome: PairingOutcome? { try? responderResult?.get() }

    var initiatorFailure: PairingFailure? {
        if case let .failure(failure)? = initiatorResult { return failure }
        return nil
    }

    var responderFailure: PairingFailure? {
        if case let .failure(failure)? = responderResult { return failure }
        return nil
    }
}
