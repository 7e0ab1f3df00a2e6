import BluetoothCore
import BluetoothCrypto
@testable import BluetoothHost
import Testing

/// What the pairing state machine promises against a peer that wants more than it should get:
/// Secure Connections Only is security level 4, a weaker pairing does not silently replace a
/// bond, MITM protection asked for is MITM protection or a failure, and out-of-band data's
/// key pair serves one pairing.
@Suite("Pairing procedure: security promises")
struct PairingProcedureSecurityTests {
    static let justWorks = SecurityManagerSettings(ioCapability: .noInputNoOutput)
    static let yesNo = SecurityManagerSettings(ioCapability: .displayYesNo)
    static let scOnly = SecurityManagerSettings(ioCapability: .displayYesNo, secureConnectionsOnly: true)

    static func legacy(_ settings: SecurityManagerSettings) -> SecurityManagerSettings {
        var legacy = settings
        legacy.offersSecureConnections = false
        return legacy
    }

    /// A stored bond with the harness's peer of the given worth.
    static func bond(with peer: DeviceAddress, authenticated: Bool, secureConnections: Bool = true, keySize: Int = 16) -> Bond {
        Bond(localIdentity: peer == PairingHarness.central ? PairingHarness.peripheral : PairingHarness.central, peerIdentity: peer,
             keySize: keySize, isAuthenticated: authenticated, isSecureConnections: secureConnections,
             peerKeys: BondKeys(longTermKey: 0xB0B0, identityResolvingKey: 0xC0C0, identityAddress: peer))
    }

    // MARK: Secure Connections Only (Core 6.0, Vol 3, Part C, 10.2.4)

    @Test("Secure Connections Only refuses a legacy peer with Authentication Requirements, in both roles")
    func scOnlyRefusesLegacy() {
        var asResponder = PairingHarness(initiator: Self.legacy(Self.yesNo), responder: Self.scOnly)
        asResponder.run()
        #expect(asResponder.responderFailure == .refused(reason: .authenticationRequirements, cause: .secureConnectionsRequired))
        #expect(asResponder.initiatorFailure == .peerFailed(.authenticationRequirements))

        var asInitiator = PairingHarness(initiator: Self.scOnly, responder: Self.legacy(Self.yesNo))
        asInitiator.run()
        #expect(asInitiator.initiatorFailure == .refused(reason: .authenticationRequirements, cause: .secureConnectionsRequired))
        #expect(asInitiator.responderFailure == .peerFailed(.authenticationRequirements))
    }

    @Test("Secure Connections Only refuses Just Works (a NoInputNoOutput peer) with Authentication Requirements, in both roles")
    func scOnlyRefusesJustWorks() {
        var asResponder = PairingHarness(initiator: Self.justWorks, responder: Self.scOnly)
        asResponder.run()
        #expect(asResponder.responderFailure == .refused(reason: .authenticationRequirements, cause: .authenticationRequired))
        #expect(asResponder.initiatorFailure == .peerFailed(.authenticationRequirements))
        #expect(asResponder.encryptionKeys.initiator == nil, "nothing was encrypted")

        var asInitiator = PairingHarness(initiator: Self.scOnly, responder: Self.justWorks)
        asInitiator.run()
        #expect(asInitiator.initiatorFailure == .refused(reason: .authenticationRequirements, cause: .authenticationRequired))
    }

    @Test("Secure Connections Only refuses a key shorter than 128 bits with Encryption Key Size, in both roles")
    func scOnlyRefusesShortKeys() {
        var shortPeer = Self.yesNo
        shortPeer.maximumKeySize = 7
        var asResponder = PairingHarness(initiator: shortPeer, responder: Self.scOnly)
        asResponder.run()
        #expect(asResponder.responderFailure == .refused(reason: .encryptionKeySize, cause: .keySizeTooSmall(7)))
        #expect(asResponder.initiatorFailure == .peerFailed(.encryptionKeySize))

        var asInitiator = PairingHarness(initiator: Self.scOnly, responder: shortPeer)
        asInitiator.run()
        #expect(asInitiator.initiatorFailure == .refused(reason: .encryptionKeySize, cause: .keySizeTooSmall(7)))
    }

    @Test("Secure Connections Only asks for MITM protection and 16 octets, and pairs at level 4 with a capable peer")
    func scOnlyPairsAtLevel4() throws {
        var pairing = PairingHarness(initiator: Self.scOnly, responder: Self.yesNo)
        pairing.run()
        guard case let .pairingRequest(request)? = pairing.transcript.first?.pdu else {
            Issue.record("no Pairing Request")
            return
        }
        #expect(request.authenticationRequirements.contains(.mitm) && request.maximumEncryptionKeySize == 16)
        let outcome = try #require(pairing.initiatorOutcome, "\(String(describing: pairing.initiatorResult))")
        #expect(outcome.method == .numericComparison && outcome.security.level == 4)
    }

    // MARK: MITM asked for (secure(authenticated:), pair(authenticated:), --mitm)

    @Test("Asking for authentication sets MITM in AuthReq; against a NoInputNoOutput peer the pairing fails, never Just Works")
    func authenticationAskedFor() {
        var pairing = PairingHarness(initiator: Self.yesNo.requiringAuthentication(true), responder: Self.justWorks)
        pairing.run()
        guard case let .pairingRequest(request)? = pairing.transcript.first?.pdu else {
            Issue.record("no Pairing Request")
            return
        }
        #expect(request.authenticationRequirements.contains(.mitm))
        #expect(pairing.initiatorFailure == .refused(reason: .authenticationRequirements, cause: .authenticationRequired))
        #expect(pairing.initiatorOutcome == nil && pairing.responderOutcome == nil)
    }

    // MARK: Bond replacement, decided before the keys are exchanged

    @Test("Just Works against an authenticated bond: the responder asks its agent, refuses by default, sends no Pairing Response")
    func weakerPairingRefusedByTheResponder() {
        let bonded = Self.bond(with: PairingHarness.central, authenticated: true)
        var pairing = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks, bonds: (nil, bonded))
        pairing.run()
        let replacement = BondReplacement(identity: PairingHarness.central, bonded: bonded.strength,
                                          proposed: KeyStrength(isAuthenticated: false, isSecureConnections: true, keySize: 16),
                                          isClaimedIdentity: false)
        #expect(pairing.responderReplacements == [replacement])
        #expect(pairing.responderFailure == .refused(reason: .authenticationRequirements, cause: .weakerThanBond(replacement)))
        #expect(pairing.initiatorFailure == .peerFailed(.authenticationRequirements))
        #expect(!pairing.transcript.contains { $0.pdu.code == .pairingResponse }, "the response was held, then never sent")
    }

    @Test("The agent may allow the weaker pairing (\"pair again?\"): it completes")
    func weakerPairingAllowed() throws {
        let bonded = Self.bond(with: PairingHarness.central, authenticated: true)
        var pairing = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks, bonds: (nil, bonded))
        pairing.responderAllowsReplacement = true
        pairing.run()
        #expect(pairing.responderReplacements.count == 1)
        let outcome = try #require(pairing.responderOutcome, "\(String(describing: pairing.responderResult))")
        #expect(outcome.method == .justWorks && pairing.initiatorOutcome != nil)
        #expect(pairing.responder.replacement?.isWeaker == true)
    }

    @Test("The initiator refuses too, before its public key leaves")
    func weakerPairingRefusedByTheInitiator() {
        let bonded = Self.bond(with: PairingHarness.peripheral, authenticated: true)
        var pairing = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks, bonds: (bonded, nil))
        pairing.run()
        #expect(pairing.initiatorReplacements.count == 1)
        #expect(pairing.initiatorFailure?.reason == .authenticationRequirements)
        #expect(pairing.responderFailure == .peerFailed(.authenticationRequirements))
        #expect(!pairing.transcript.contains { $0.fromInitiator && $0.pdu.code == .pairingPublicKey })
    }

    @Test("Legacy over LE Secure Connections is weaker; a shorter key alone is refused with Encryption Key Size")
    func whatIsWeaker() {
        let scBond = Self.bond(with: PairingHarness.central, authenticated: false)
        var legacy = PairingHarness(initiator: Self.legacy(Self.justWorks), responder: Self.justWorks, bonds: (nil, scBond))
        legacy.run()
        #expect(legacy.responderFailure?.reason == .authenticationRequirements)
        #expect(legacy.responderReplacements.first?.proposed.isSecureConnections == false)

        var short = Self.justWorks
        short.maximumKeySize = 10
        var shorter = PairingHarness(initiator: short, responder: Self.justWorks, bonds: (nil, scBond))
        shorter.run()
        #expect(shorter.responderFailure == .refused(reason: .encryptionKeySize, cause: .weakerThanBond(
            BondReplacement(identity: PairingHarness.central, bonded: scBond.strength,
                            proposed: KeyStrength(isAuthenticated: false, isSecureConnections: true, keySize: 10), isClaimedIdentity: false))))
    }

    @Test("As strong as the bond, or stronger: no question, the pairing completes and knows what it replaces")
    func equalOrStrongerPairingGoesAhead() throws {
        let bonded = Self.bond(with: PairingHarness.central, authenticated: false)
        var pairing = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks, bonds: (nil, bonded))
        pairing.run()
        #expect(pairing.responderReplacements.isEmpty)
        #expect(pairing.responderOutcome != nil)
        #expect(pairing.responder.replacement?.isWeaker == false)
    }

    @Test("Without bonding nothing is replaced: no question")
    func nonBondingPairingIsNotAReplacement() {
        let bonded = Self.bond(with: PairingHarness.central, authenticated: true)
        var pairing = PairingHarness(initiator: SecurityManagerSettings(bondable: false), responder: Self.justWorks, bonds: (nil, bonded))
        pairing.run()
        #expect(pairing.responderReplacements.isEmpty && pairing.responderOutcome?.isBonding == false)
    }

    @Test("A PDU while the agent is asked fails the pairing (Unspecified Reason); a late answer changes nothing")
    func pduDuringTheQuestion() {
        let bonded = Self.bond(with: PairingHarness.central, authenticated: true)
        var responder = PairingProcedure(role: .responder, settings: Self.justWorks, initiatorAddress: PairingHarness.central,
                                         responderAddress: PairingHarness.peripheral, localIdentity: PairingHarness.peripheral,
                                         localIdentityResolvingKey: 1, bonded: bonded)
        let request = SMPPairingFeatures(ioCapability: .noInputNoOutput, authenticationRequirements: [.bonding, .secureConnections],
                                         initiatorKeyDistribution: [.identityKey], responderKeyDistribution: [.identityKey])
        let asked = responder.receive(.pairingRequest(request))
        #expect(asked.count == 1 && { if case .askReplacement = asked[0] { true } else { false } }())
        let failed = responder.receive(.pairingConfirm(confirmValue: 1))
        #expect(failed.contains(.send(.pairingFailed(.unspecifiedReason))))
        #expect(responder.replacementAnswered(true).isEmpty)
    }

    @Test("Weaker, in each respect", arguments: [
        (KeyStrength(isAuthenticated: false, isSecureConnections: true, keySize: 16), true),
        (KeyStrength(isAuthenticated: true, isSecureConnections: false, keySize: 16), true),
        (KeyStrength(isAuthenticated: true, isSecureConnections: true, keySize: 15), true),
        (KeyStrength(isAuthenticated: true, isSecureConnections: true, keySize: 16), false),
    ])
    func weakerThanALevel4Bond(proposed: KeyStrength, weaker: Bool) {
        let level4 = KeyStrength(isAuthenticated: true, isSecureConnections: true, keySize: 16)
        #expect(proposed.isWeaker(than: level4) == weaker)
        #expect(!level4.isWeaker(than: proposed))
        #expect(level4.isLevel4 && proposed.isLevel4 == !weaker)
    }

    // MARK: Out-of-band key pair (Core 6.0, Vol 3, Part H, 2.3.5.6.4)

    @Test("OOB data's key pair serves the OOB pairing it was made for, and no pairing without OOB")
    func outOfBandKeyPairServesOnePairing() throws {
        let ours = LocalOutOfBand(keyPair: SecureConnectionsKeyPair(), random: 0xA1A1)
        // The peer has our data: the OOB pairing uses its key pair.
        var withData = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks, outOfBand: (
            initiator: (ours, nil), responder: (nil, ours.data(address: PairingHarness.central))))
        withData.run()
        #expect(withData.initiatorOutcome?.method == .outOfBand, "\(String(describing: withData.initiatorResult))")
        #expect(withData.initiator.usedLocalOutOfBand)
        #expect(withData.initiator.keyPair?.publicKeyX == ours.keyPair.publicKeyX)

        // The peer has nothing: Just Works with a key pair of its own, not the OOB one.
        var without = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks, outOfBand: (
            initiator: (ours, nil), responder: (nil, nil)))
        without.run()
        #expect(without.initiatorOutcome?.method == .justWorks)
        #expect(!without.initiator.usedLocalOutOfBand)
        let used = try #require(without.initiator.keyPair)
        #expect(used.publicKeyX != ours.keyPair.publicKeyX, "the OOB key pair went to a pairing without OOB")
    }
}

@Suite("Repeated Attempts (Core 6.0, Vol 3, Part H, 2.3.6)")
struct PairingAttemptsTests {
    static let settings = SecurityManagerSettings(initialRetryInterval: .seconds(2), maximumRetryInterval: .seconds(8),
                                                  failedPairingBudget: 4, failedPairingWindow: .seconds(60))
    static let origin = BluetoothClock.Instant(offset: .seconds(1000))

    /// `count` failed pairings at `now`, each from a new random address (a peer rotating its address).
    static func failures(_ count: Int, fromNewAddressesAt now: BluetoothClock.Instant, gaveGuessAtSecret: Bool) -> PairingAttempts {
        var attempts = PairingAttempts()
        for index in 0..<count {
            attempts.failed(address(0x40_00_00_00_00_00 | UInt64(index)), gaveGuessAtSecret: gaveGuessAtSecret, now: now, settings: settings)
        }
        return attempts
    }

    static func address(_ value: UInt64, _ type: AddressType = .random) -> DeviceAddress {
        DeviceAddress(BluetoothAddress(rawValue: value), type: type)
    }

    @Test("The wait doubles per failure up to the maximum, per claimant, and a success resets it")
    func doubling() {
        var settings = Self.settings
        settings.failedPairingBudget = 0
        var attempts = PairingAttempts()
        let peer = Self.address(0xC0_00_00_00_00_01)
        var now = Self.origin
        #expect(attempts.wait(for: peer, now: now) == nil)
        for expected in [2, 4, 8, 8] {
            attempts.failed(peer, gaveGuessAtSecret: true, now: now, settings: settings)
            #expect(attempts.wait(for: peer, now: now) == .seconds(expected))
            #expect(attempts.wait(for: peer, now: now + (.seconds(expected) - .milliseconds(1))) == .milliseconds(1))
            now = now + .seconds(expected)
            #expect(attempts.wait(for: peer, now: now) == nil)
            // Another claimant is not held up by this one's failures.
            #expect(attempts.wait(for: Self.address(0xC0_00_00_00_00_02), now: now + .seconds(-1)) == nil)
        }
        attempts.failed(peer, gaveGuessAtSecret: true, now: now, settings: settings)
        attempts.succeeded(peer)
        #expect(attempts.wait(for: peer, now: now) == nil)
    }

    @Test("An identity address type counts as its base type: the same claimant")
    func identityTypes() {
        var attempts = PairingAttempts()
        attempts.failed(Self.address(0x11, .publicIdentity), gaveGuessAtSecret: false, now: Self.origin, settings: Self.settings)
        #expect(attempts.wait(for: Self.address(0x11, .public), now: Self.origin) == .seconds(2))
    }

    @Test("A new address for each guess meets the budget: past it no Passkey Entry pairing runs until the oldest failure leaves the window")
    func rotatingAddressesMeetTheBudget() {
        var attempts = PairingAttempts()
        var now = Self.origin
        for index in 0..<4 {
            let fresh = Self.address(0x40_00_00_00_00_00 | UInt64(index))
            #expect(attempts.passkeyEntryWait(now: now, settings: Self.settings) == nil, "guess \(index)")
            attempts.failed(fresh, gaveGuessAtSecret: true, now: now, settings: Self.settings)
            now = now + .seconds(1)
        }
        #expect(attempts.passkeyEntryWait(now: now, settings: Self.settings) == .seconds(56), "the first failure was 4 s ago")
        #expect(attempts.passkeyEntryWait(now: Self.origin + .seconds(60), settings: Self.settings) == nil)
        // A fifth claimant may still pair (by another method: the procedure refuses Passkey Entry).
        #expect(attempts.wait(for: Self.address(0x40_00_00_00_00_99), now: now) == nil)
        // Off when the budget is 0.
        var off = Self.settings
        off.failedPairingBudget = 0
        #expect(attempts.passkeyEntryWait(now: now, settings: off) == nil)
    }

    @Test("Passkey Entry pairings still running count against the budget: with one guess left, one runs at a time")
    func runningPairingsCountAgainstTheBudget() {
        let now = Self.origin
        let attempts = Self.failures(3, fromNewAddressesAt: now, gaveGuessAtSecret: true)
        #expect(attempts.passkeyEntryWait(now: now, settings: Self.settings, running: 0) == nil, "one guess left")
        #expect(attempts.passkeyEntryWait(now: now, settings: Self.settings, running: 1) == .seconds(60),
                "the running pairing may take it: open again when the oldest failure leaves the window")
        #expect(attempts.passkeyEntryWait(now: now + .seconds(60), settings: Self.settings, running: 1) == nil)
        // Running pairings alone fill the budget: closed, with a window as the hint.
        #expect(PairingAttempts().passkeyEntryWait(now: now, settings: Self.settings, running: 4) == .seconds(60))
        #expect(PairingAttempts().passkeyEntryWait(now: now, settings: Self.settings, running: 3) == nil)
    }

    @Test("Failures that gave no guess at a secret, from a new address each time, hold up only their own claimant")
    func failuresWithoutASecretDoNotStopEveryone() {
        let now = Self.origin
        let attempts = Self.failures(100, fromNewAddressesAt: now, gaveGuessAtSecret: false)
        #expect(attempts.recentFailures.isEmpty)
        #expect(attempts.passkeyEntryWait(now: now, settings: Self.settings) == nil, "Passkey Entry still open")
        #expect(attempts.wait(for: Self.address(0x40_00_00_00_00_99), now: now) == nil, "someone else pairs at once")
        #expect(attempts.wait(for: Self.address(0x40_00_00_00_00_01), now: now) == .seconds(2), "each claimant still waits")
    }

    @Test("At most 256 claimants are remembered")
    func bounded() {
        var attempts = PairingAttempts()
        for index in 0..<1000 { attempts.failed(Self.address(UInt64(index)), gaveGuessAtSecret: true, now: Self.origin, settings: Self.settings) }
        #expect(attempts.byClaimant.count <= PairingAttempts.claimantLimit)
        #expect(attempts.recentFailures.count == 4)
    }
}
