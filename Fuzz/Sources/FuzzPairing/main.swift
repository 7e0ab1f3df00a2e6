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
/// Input: each side's settings (four bytes: IO capability, flags, minimum and maximum key size),
/// a seed for the nonces, then up to 200 steps: an operation byte (low nibble: what; top bit:
/// which side) and its operands.

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

func settings(_ input: inout FuzzInput) -> SecurityManagerSettings {
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
    return settings
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
    let initiatorSettings = settings(&input)
    let responderSettings = settings(&input)
    let seed = UInt64(input.byte())
    var sides = [
        Side(procedure: PairingProcedure(role: .initiator, settings: initiatorSettings, initiatorAddress: initiatorAddress,
                                         responderAddress: responderAddress, localIdentity: initiatorAddress, localIdentityResolvingKey: 1,
                                         random: PairingRandom(SeededGenerator(state: seed)), keyPair: initiatorKeys), name: "initiator"),
        Side(procedure: PairingProcedure(role: .responder, settings: responderSettings, initiatorAddress: initiatorAddress,
                                         responderAddress: responderAddress, localIdentity: responderAddress, localIdentityResolvingKey: 2,
                                         random: PairingRandom(SeededGenerator(state: ~seed)), keyPair: responderKeys), name: "responder"),
    ]
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
    func answer(_ side: Int, honest: Bool, _ input: inout FuzzInput) {
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
            if !sides[side].prompts.isEmpty {
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
    if !tampered, sides[0].terminal != nil, sides[1].terminal != nil {
        // An exchange with no PDU lost or forged and neither side giving up completes on both
        // sides or fails on both.
        let completed = sides.map { if case .complete = $0.terminal { true } else { false } }
        fuzzCheck(completed[0] == completed[1], "an honest pairing completed on one side only: \(sides.map(\.terminal))")
    }
}

runFuzzer { input in run(&input) }
