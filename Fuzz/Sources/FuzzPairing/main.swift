import BluetoothCore
import BluetoothCrypto
// PairingProcedure is the host's internal state machine (`@testable import`, allowed in the
// fuzz build: a debug build, where SwiftPM enables testing).
@testable import BluetoothHost
import FuzzSupport

/// The Security Manager's pairing state machine (Core 6.0, Vol 3, Part H, 2.3): an initiator
/// and a responder ``PairingProcedure`` with fuzzed settings talk to each other through a
/// fuzzer that delivers, drops, corrupts and forges SMP PDUs, answers the users' prompts
/// (honestly or not), reports encryption changes and fires timeouts. Afterwards whatever is
/// left is delivered honestly, so every input ends in a full pairing or a failure.
///
/// Invariants: nothing traps; each side reports at most one `.complete` or `.fail`, and no
/// action at all once finished; a side that completed has encrypted; when both complete they
/// hold the same key (a corrupted phase-2 PDU must never yield two different keys that both
/// sides accept).
///
/// The attacker role (issue 21): a side may hold a level 4 bond, either with the peer's own
/// address (known before the keys: the procedure's `bonded`) or with a third device's identity
/// that the peer may claim by distributing it in Identity Address Information (operation 13
/// rewrites the PDU in flight). Then: a side never completes a pairing weaker than a bond it
/// knew before the keys unless its agent allowed the replacement; and applying the host's rule
/// after key distribution (`BondReplacement.afterKeyDistribution`), a stored bond is never
/// replaced by weaker keys without the agent's consent.
///
/// Input: each side's settings (four bytes: IO capability, flags, minimum and maximum key size;
/// flag bit 6: the side holds a bond, bit 7: with a third identity rather than the peer's
/// address), a seed for the nonces, then up to 200 steps: an operation byte (low nibble: what;
/// top bit: which side) and its operands.

/// A SplitMix64 generator: the procedures' nonces and passkeys, replayable from the input.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Two fixed key pairs: generating P-256 keys on every input would dominate the run.
let initiatorKeys = SecureConnectionsKeyPair()
let responderKeys = SecureConnectionsKeyPair()

/// One side: its procedure, what it sent that the other has not received, its pending prompts
/// and what it reported.
struct Side {
    var procedure: PairingProcedure
    var outbox: [SMPPDU] = []
    var prompts: [PairingPrompt] = []
    var displayed: UInt32?
    var terminal: PairingProcedure.Action?
    var encrypted = false
    /// The key this side started encryption with (initiator).
    var encryptWith: UInt128?
    let name: String
    /// The bonds this side's host stores, by identity (the attacker role).
    var store: [DeviceAddress: Bond] = [:]
    /// A replacement the agent was asked about and has not answered; whether it allowed one.
    var pendingReplacement: BondReplacement?
    var allowedReplacement = false
    /// Keypress Notifications handed to the agent.
    var keypresses = 0

    /// Carries out `actions` from one call and checks the invariants on them.
    mutating func take(_ actions: [PairingProcedure.Action], wasFinished: Bool, what: String) {
        fuzzCheck(!wasFinished || actions.isEmpty, "\(name): \(actions) after finishing, on \(what)")
        for action in actions {
            switch action {
            case let .send(pdu):
                outbox.append(pdu)
            case let .prompt(prompt):
                if case let .displayPasskey(value) = prompt {
                    fuzzCheck(value <= 999_999, "\(name): displayed passkey \(value)")
                    displayed = value
                }
                prompts.append(prompt)
            case let .encrypt(key, _, _):
                fuzzCheck(procedure.role == .initiator, "\(name): only the initiator starts encryption")
                encryptWith = key
            case let .askReplacement(replacement):
                fuzzCheck(replacement.isWeaker && pendingReplacement == nil, "\(name): asked about \(replacement)")
                fuzzCheck(procedure.bonded?.peerIdentity == replacement.identity, "\(name): asked about a bond it does not hold")
                pendingReplacement = replacement
            case .keypress:
                keypresses += 1
                fuzzCheck(procedure.keypressAgreed, "\(name): a keypress passed on without both Keypress flags, on \(what)")
                fuzzCheck(keypresses <= PairingProcedure.maximumKeypresses, "\(name): \(keypresses) keypresses passed on")
            case .complete, .fail:
                fuzzCheck(terminal == nil, "\(name): a second outcome \(action) after \(String(describing: terminal)), on \(what)")
                terminal = action
            }
        }
        if case .complete = terminal { fuzzCheck(encrypted, "\(name): completed on an unencrypted link") }
        fuzzCheck(procedure.isFinished == (terminal != nil), "\(name): finished \(procedure.isFinished) but reported \(String(describing: terminal))")
    }

    mutating func feed(_ what: String, _ body: (inout PairingProcedure) -> [PairingProcedure.Action]) {
        let wasFinished = procedure.isFinished
        let actions = body(&procedure)
        take(actions, wasFinished: wasFinished, what: what)
    }
}

func settings(_ input: inout FuzzInput) -> (SecurityManagerSettings, flags: UInt8, legacyOutOfBandKey: UInt128?) {
    var settings = SecurityManagerSettings(ioCapability: SMPIOCapability(rawValue: input.byte() % 5) ?? .noInputNoOutput)
    let flags = input.byte()
    settings.bondable = flags & 0x01 != 0
    settings.requiresMITM = flags & 0x02 != 0
    settings.secureConnectionsOnly = flags & 0x04 != 0
    settings.offersSecureConnections = flags & 0x08 == 0
    settings.distributesIdentity = flags & 0x10 == 0
    settings.distributesSigningKey = flags & 0x20 == 0
    let minimum = 7 + Int(input.byte() % 10)
    settings.minimumKeySize = minimum
    settings.maximumKeySize = max(minimum, 7 + Int(input.byte() % 10))
    let more = input.byte()
    settings.keypressNotifications = more & 0x01 != 0
    // A legacy out-of-band TK: the same on both sides, or (0x04) one the other side does not share.
    let legacyOutOfBandKey: UInt128? = more & 0x02 == 0 ? nil : (more & 0x04 == 0 ? 0x5445_4D50_4B45_59 : UInt128(more))
    return (settings, flags, legacyOutOfBandKey)
}

/// The identity of a third, bonded device that the attacker may claim.
let thirdIdentity = DeviceAddress(BluetoothAddress(rawValue: 0xC000_0000_0099), type: .public)

/// A level 4 bond held by `local` with `peer`.
func levelFourBond(local: DeviceAddress, peer: DeviceAddress) -> Bond {
    Bond(localIdentity: local, peerIdentity: peer, keySize: 16, isAuthenticated: true, isSecureConnections: true,
         peerKeys: BondKeys(longTermKey: 0x4C54_4B, identityResolvingKey: 0x1234, identityAddress: peer))
}

/// A PDU the fuzzer forges: bytes that decode as SMP, or nothing.
func forged(_ input: inout FuzzInput) -> SMPPDU? {
    try? SMPPDU.decode(input.chunk())
}

/// `pdu` with one octet changed, if it still decodes.
func corrupted(_ pdu: SMPPDU, _ input: inout FuzzInput) -> SMPPDU? {
    var bytes = pdu.encode()
    guard !bytes.isEmpty else { return nil }
    let index = input.index(bytes.count)
    bytes[index] ^= max(1, input.byte())
    return try? SMPPDU.decode(bytes)
}

func run(_ input: inout FuzzInput) {
    let initiatorAddress = DeviceAddress(BluetoothAddress(rawValue: 0xC000_0000_0001), type: .public)
    let responderAddress = DeviceAddress(BluetoothAddress(rawValue: 0xC000_0000_0002), type: .random)
    let (initiatorSettings, initiatorFlags, initiatorTK) = settings(&input)
    let (responderSettings, responderFlags, responderTK) = settings(&input)
    let seed = UInt64(input.byte())
    // The attacker role: a bond with the peer's address (known before the keys) or with a third
    // identity the peer may claim (known only from the identity it distributes).
    func bond(_ flags: UInt8, local: DeviceAddress, peer: DeviceAddress) -> Bond? {
        guard flags & 0x40 != 0 else { return nil }
        return levelFourBond(local: local, peer: flags & 0x80 != 0 ? thirdIdentity : peer)
    }
    let initiatorBond = bond(initiatorFlags, local: initiatorAddress, peer: responderAddress)
    let responderBond = bond(responderFlags, local: responderAddress, peer: initiatorAddress)
    var sides = [
        Side(procedure: PairingProcedure(role: .initiator, settings: initiatorSettings, initiatorAddress: initiatorAddress,
                                         responderAddress: responderAddress, localIdentity: initiatorAddress, localIdentityResolvingKey: 1,
                                         random: PairingRandom(SeededGenerator(state: seed)), keyPair: initiatorKeys,
                                         legacyOutOfBandKey: initiatorTK, bonded: initiatorBond?.peerIdentity == responderAddress ? initiatorBond : nil), name: "initiator"),
        Side(procedure: PairingProcedure(role: .responder, settings: responderSettings, initiatorAddress: initiatorAddress,
                                         responderAddress: responderAddress, localIdentity: responderAddress, localIdentityResolvingKey: 2,
                                         random: PairingRandom(SeededGenerator(state: ~seed)), keyPair: responderKeys,
                                         legacyOutOfBandKey: responderTK, bonded: responderBond?.peerIdentity == initiatorAddress ? responderBond : nil), name: "responder"),
    ]
    if let initiatorBond { sides[0].store[initiatorBond.peerIdentity] = initiatorBond }
    if let responderBond { sides[1].store[responderBond.peerIdentity] = responderBond }
    sides[0].feed("start") { $0.start() }
    var tampered = false

    func deliver(from sender: Int, _ pdu: SMPPDU) {
        sides[1 - sender].feed("\(pdu)") { $0.receive(pdu) }
    }

    /// The controllers encrypt: both sides learn whether their keys matched.
    func encrypt() {
        guard let key = sides[0].encryptWith else { return }
        sides[0].encryptWith = nil
        let responderKey = sides[1].procedure.keyForEncryption(ediv: 0, rand: 0)
        let success = responderKey == key
        if success {
            sides[0].encrypted = true
            sides[1].encrypted = true
        }
        sides[0].feed("encryption \(success)") { $0.encryptionChanged(success: success) }
        sides[1].feed("encryption \(success)") { $0.encryptionChanged(success: success) }
    }

    /// A user answers the oldest prompt: honestly (the other side's passkey, "yes"), or not.
    /// With no prompt, the question about a bond replacement: an honest user refuses (the
    /// default), another allows it.
    func answer(_ side: Int, honest: Bool, _ input: inout FuzzInput) {
        if sides[side].prompts.isEmpty, sides[side].pendingReplacement != nil {
            let allowed = !honest && input.bool()
            sides[side].pendingReplacement = nil
            if allowed { sides[side].allowedReplacement = true }
            sides[side].feed("replacement \(allowed)") { $0.replacementAnswered(allowed) }
            return
        }
        guard !sides[side].prompts.isEmpty else { return }
        let prompt = sides[side].prompts.removeFirst()
        switch prompt {
        case .displayPasskey:
            break
        case .enterPasskey:
            let value: UInt32?
            if honest {
                value = sides[1 - side].displayed ?? 123_456
            } else {
                let choice = input.byte()
                value = choice == 0 ? nil : UInt32(input.uint16()) * UInt32(choice)
            }
            sides[side].feed("passkey \(String(describing: value))") { $0.passkeyEntered(value) }
        case .confirmNumber:
            let matches = honest || input.bool()
            sides[side].feed("confirm \(matches)") { $0.numberConfirmed(matches) }
        }
    }

    var steps = 0
    while !input.isAtEnd, steps < 200 {
        steps += 1
        let operation = input.byte()
        let side = Int(operation >> 7)
        switch operation & 0x0F {
        case 0, 1, 2:
            if !sides[side].outbox.isEmpty { deliver(from: side, sides[side].outbox.removeFirst()) }
        case 3:
            if !sides[side].outbox.isEmpty {
                let pdu = sides[side].outbox.removeFirst()
                if let changed = corrupted(pdu, &input) {
                    tampered = tampered || changed != pdu
                    deliver(from: side, changed)
                } else {
                    // Corrupted past decoding: the PDU is lost.
                    tampered = true
                }
            }
        case 4:
            if let pdu = forged(&input) {
                tampered = true
                deliver(from: side, pdu)
            }
        case 5:
            if !sides[side].outbox.isEmpty {
                sides[side].outbox.removeFirst()
                tampered = true
            }
        case 6, 7:
            answer(side, honest: true, &input)
        case 8:
            answer(side, honest: false, &input)
        case 9:
            encrypt()
        case 10:
            let success = input.bool()
            if success { sides[side].encrypted = true }
            tampered = true
            sides[side].feed("stray encryption \(success)") { $0.encryptionChanged(success: success) }
        case 11:
            // One side gives up: the other may still finish (a timeout sends nothing).
            tampered = true
            sides[side].feed("timeout") { $0.timedOut() }
        case 12:
            tampered = true
            let reason = SMPPairingFailureReason(rawValue: input.byte())
            sides[side].feed("cancel") { $0.cancel(reason: reason) }
        case 13:
            // The attacker claims the identity bonded at the other side (its peer's, or a
            // third device's) in the Identity Address Information on its way.
            if case .identityAddressInformation? = sides[side].outbox.first,
               let claimed = sides[1 - side].store.keys.first {
                sides[side].outbox[0] = .identityAddressInformation(claimed)
                tampered = true
            }
        default:
            if !sides[side].outbox.isEmpty {
                // A PDU delivered twice.
                let pdu = sides[side].outbox[0]
                tampered = true
                deliver(from: side, pdu)
            }
        }
    }

    // Whatever is left goes honestly, until nothing moves.
    var moved = true
    var rounds = 0
    while moved, rounds < 400 {
        rounds += 1
        moved = false
        for side in 0...1 {
            if !sides[side].outbox.isEmpty {
                deliver(from: side, sides[side].outbox.removeFirst())
                moved = true
            }
            if !sides[side].prompts.isEmpty || sides[side].pendingReplacement != nil {
                answer(side, honest: true, &input)
                moved = true
            }
        }
        if sides[0].encryptWith != nil {
            encrypt()
            moved = true
        }
    }
    fuzzCheck(rounds < 400, "the honest run did not settle")

    if case let .complete(first) = sides[0].terminal, case let .complete(second) = sides[1].terminal {
        fuzzCheck(sides[0].procedure.encryptionKey == sides[1].procedure.encryptionKey,
                  "both completed with different keys (tampered: \(tampered))")
        fuzzCheck(first.isSecureConnections == second.isSecureConnections && first.keySize == second.keySize,
                  "the sides disagree: \(first) and \(second)")
    }
    for index in 0...1 {
        let side = sides[index]
        guard case let .complete(outcome) = side.terminal else { continue }
        // Before the keys: a weaker pairing than the bond the side knew completes only with consent.
        if let bonded = side.procedure.bonded, outcome.isBonding, outcome.strength.isWeaker(than: bonded.strength) {
            fuzzCheck(side.allowedReplacement, "\(side.name): completed a pairing weaker than its bond without consent: \(outcome.strength)")
        }
        // After the keys: the host's rule on the identity the peer distributed (claimed or
        // not). A bond is replaced by weaker keys only after the agent allowed it: before the
        // keys, or now (the rule must say so; the default answer then keeps the bond).
        guard outcome.isBonding else { continue }
        let identity = outcome.peerKeys.identityAddress ?? (index == 0 ? responderAddress : initiatorAddress)
        let replacement = BondReplacement.afterKeyDistribution(existing: side.store[identity], proposed: outcome.strength,
                                                               checkedBeforeKeys: side.procedure.replacement)
        fuzzCheck((replacement == nil) == (side.store[identity] == nil), "\(side.name): \(String(describing: replacement)) for \(identity)")
        if let replacement, replacement.isWeaker {
            fuzzCheck(replacement.needsConsentAfterKeys || side.allowedReplacement,
                      "\(side.name): \(replacement) would be stored with no question")
        }
        if identity == thirdIdentity, let replacement {
            fuzzCheck(replacement.isClaimedIdentity, "\(side.name): a claimed identity taken for the peer's own")
        }
    }

    if !tampered, sides[0].terminal != nil, sides[1].terminal != nil {
        // An exchange with no PDU lost or forged and neither side giving up completes on both
        // sides or fails on both.
        let completed = sides.map { if case .complete = $0.terminal { true } else { false } }
        fuzzCheck(completed[0] == completed[1], "an honest pairing completed on one side only: \(sides.map(\.terminal))")
    }
}

runFuzzer { input in run(&input) }
