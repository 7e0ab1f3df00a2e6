import BluetoothCore
import BluetoothCrypto

/// One pairing on one link, in either role, as a state machine with no I/O (Core 6.0, Vol 3,
/// Part H, 2.3): the host feeds it SMP PDUs, the user's answers and the link's encryption
/// changes, and carries out the ``Action``s it returns.
///
/// Phase 1 (feature exchange) is here; phase 2 is in `PairingProcedure+Legacy.swift` and
/// `PairingProcedure+SecureConnections.swift`, phase 3 (key distribution) in
/// `PairingProcedure+KeyDistribution.swift`.
struct PairingProcedure {
    enum Role: Sendable { case initiator, responder }

    /// What the host must do next.
    enum Action: Equatable {
        case send(SMPPDU)
        /// Ask the user (the host's pairing agent) and feed the answer back.
        case prompt(PairingPrompt)
        /// The pairing would replace a bond with a weaker key: ask the agent
        /// (``PairingAgent/shouldReplaceBond(_:for:)``) and feed the answer to
        /// ``replacementAnswered(_:)``. Nothing more is sent until then.
        case askReplacement(BondReplacement)
        /// Central: start encryption with this key (LE Enable Encryption).
        case encrypt(key: UInt128, ediv: UInt16, rand: UInt64)
        case complete(PairingOutcome)
        /// Pairing failed (a Pairing Failed to the peer, if any, is among the actions before).
        case fail(PairingFailure)
        /// The peer's user pressed a key while typing the passkey this side displays (a Keypress
        /// Notification, Vol 3, Part H, 3.5.8): tell the agent. Never restarts the Security
        /// Manager Timer.
        case keypress(SMPKeypressNotificationType)
    }

    enum Phase: Equatable {
        case idle
        /// Initiator: Pairing Request sent.
        case awaitingResponse
        /// Features agreed on, weaker than the bond with the peer: waiting for the agent to
        /// allow the replacement (a responder holds its Pairing Response until then).
        case awaitingReplacementConsent
        /// Legacy: the TK is not known yet (passkey to be typed).
        case legacyAwaitingPasskey
        case legacyAwaitingConfirm
        case legacyAwaitingRandom
        case scAwaitingPublicKey
        /// Cb (Just Works / Numeric Comparison) or Cai/Cbi (Passkey Entry).
        case scAwaitingCommitment
        case scAwaitingNonce
        /// Numeric Comparison on the initiator: Nb checked, the user has not answered yet.
        case scAwaitingConfirmation
        case scAwaitingDHKeyCheck
        case awaitingEncryption
        case distributingKeys
        case complete
        case failed
    }

    let role: Role
    private(set) var settings: SecurityManagerSettings
    /// The initiator's and the responder's addresses on this connection, for c1, f5 and f6.
    let initiatorAddress: DeviceAddress
    let responderAddress: DeviceAddress
    /// This device's identity, distributed with its IRK.
    let localIdentity: DeviceAddress
    let localIdentityResolvingKey: UInt128
    var random: PairingRandom
    /// Out-of-band data: this device's (whose key pair an OOB pairing uses when the peer has
    /// the data) and the peer's.
    let localOutOfBand: LocalOutOfBand?
    let peerOutOfBand: OutOfBandData?
    /// LE legacy out-of-band pairing: the 128-bit TK both sides got out of band (Vol 3, Part H,
    /// 2.3.5.4), the peer's (``LegacyOutOfBandData``) or this device's.
    let legacyOutOfBandKey: UInt128?
    /// The bond with the peer as known before the keys are exchanged (its address is the
    /// bond's identity or resolves to it): a bonding pairing weaker than it waits for the
    /// agent's consent (see ``BondReplacement``).
    var bonded: Bond?
    /// Pair without bonding whatever the settings say (the host keeps as many bonds as it
    /// may): this side's AuthReq leaves the Bonding flag clear and no keys are distributed
    /// (Vol 3, Part H, 3.5.1). Before the Pairing Request or Response is sent.
    mutating func declineBonding() {
        settings.bondable = false
    }

    /// The replacement waiting for, or allowed by, the agent.
    private(set) var replacement: BondReplacement?
    /// The pairing's LE Secure Connections key pair is the one of ``localOutOfBand``: once the
    /// peer has passed the pairing's checks, the host makes no further pairing with it (the
    /// data was handed to one peer).
    var usedLocalOutOfBand = false
    /// The pairing uses ``legacyOutOfBandKey`` as its TK: once the peer has passed the
    /// pairing's checks, the host makes no further pairing with it (one TK, one pairing).
    var usedLegacyOutOfBand: Bool { method == .outOfBand && !isSecureConnections && legacyOutOfBandKey != nil }
    /// The peer's confirm value (LE legacy pairing) or DHKey check (LE Secure Connections)
    /// checked out: it holds what the method needed (the TK, this device's OOB random, the
    /// passkey). Set as the link is about to be encrypted.
    private(set) var peerPassedChecks = false
    /// Keypress Notifications taken from the peer in this pairing: past ``maximumKeypresses`` the
    /// rest are ignored (a user types six digits, erases some; a peer that sends thousands is
    /// not typing).
    var keypressCount = 0
    static let maximumKeypresses = 64
    /// Set by the host just before the method is chosen, while no Passkey Entry pairing may run
    /// (the budget of guesses across peers is spent, ``PairingAttempts``): how long that lasts.
    /// Should the features select Passkey Entry, the pairing fails with Repeated Attempts.
    var passkeyEntryClosed: Duration?

    private(set) var phase: Phase = .idle
    var request: SMPPairingFeatures?
    var response: SMPPairingFeatures?
    var method: PairingMethod = .justWorks
    var isSecureConnections = false
    var keySize = 16
    /// Both sides set bonding.
    var isBonding = false
    /// The passkey once known (either side's display, or the user's entry).
    var passkey: UInt32?

    // Legacy phase 2.
    var legacyLocalRandom: UInt128 = 0
    var legacyPeerConfirm: UInt128?

    // LE Secure Connections phase 2.
    var keyPair: SecureConnectionsKeyPair?
    var peerPublicKey: SMPPublicKey?
    var dhKey: [UInt8] = []
    var localNonce: UInt128 = 0
    var peerNonce: UInt128 = 0
    var peerCommitment: UInt128?
    /// Passkey Entry: this side sent its commitment for the round.
    var localCommitted = false
    /// Passkey Entry round, 0…19 (Vol 3, Part H, 2.3.5.6.3).
    var passkeyRound = 0
    /// Numeric Comparison on the responder: the user's answer, and the initiator's DHKey check
    /// if it came first.
    var userConfirmed = false
    var pendingPeerDHKeyCheck: UInt128?
    var macKey: UInt128 = 0

    /// The key the link is encrypted with at the end of phase 2: STK (legacy) or LTK.
    var encryptionKey: UInt128 = 0

    // Phase 3.
    var localKeys = PairingKeys()
    var peerKeys = PairingKeys()
    /// What the peer still has to send, and what this device sends.
    var expectedPeerKeys: SMPKeyDistribution = []
    var keysToSend: SMPKeyDistribution = []
    /// The next peer key PDU expected in a distribution, by code.
    var pendingKeyPDUs: [SMPCode] = []
    /// An identity address the peer distributed that was not taken (see ``receiveKey(_:)``).
    var droppedIdentityAddress: DeviceAddress?

    init(role: Role, settings: SecurityManagerSettings, initiatorAddress: DeviceAddress, responderAddress: DeviceAddress,
         localIdentity: DeviceAddress, localIdentityResolvingKey: UInt128, random: PairingRandom = PairingRandom(),
         keyPair: SecureConnectionsKeyPair? = nil, localOutOfBand: LocalOutOfBand? = nil, peerOutOfBand: OutOfBandData? = nil,
         legacyOutOfBandKey: UInt128? = nil, bonded: Bond? = nil) {
        self.role = role
        self.settings = settings
        self.initiatorAddress = initiatorAddress
        self.responderAddress = responderAddress
        self.localIdentity = localIdentity
        self.localIdentityResolvingKey = localIdentityResolvingKey
        self.random = random
        self.localOutOfBand = localOutOfBand
        self.peerOutOfBand = peerOutOfBand
        self.legacyOutOfBandKey = legacyOutOfBandKey
        self.bonded = bonded
        self.keyPair = keyPair
    }

    var isFinished: Bool { phase == .complete || phase == .failed }

    /// The features this device offers; a responder answers `request`.
    func localFeatures(answering request: SMPPairingFeatures? = nil) -> SMPPairingFeatures {
        SMPPairingFeatures(ioCapability: settings.ioCapability, oobDataPresent: hasOutOfBandData(answering: request),
                           authenticationRequirements: settings.authenticationRequirements,
                           maximumEncryptionKeySize: UInt8(settings.effectiveMaximumKeySize),
                           initiatorKeyDistribution: role == .initiator ? settings.keysToDistribute : settings.keysToAccept,
                           responderKeyDistribution: role == .initiator ? settings.keysToAccept : settings.keysToDistribute)
    }

    /// The OOB data flag: "OOB authentication data from the remote device present" (Vol 3,
    /// Part H, 3.5.1), for the kind of pairing this one will be. LE Secure Connections needs the
    /// peer's r and C; LE legacy pairing needs a TK both sides have. The responder knows which
    /// it will be from the request; the initiator does not yet, and says it has data when it has
    /// either (a legacy TK alone, with a peer that turns out to do LE Secure Connections, then
    /// fails with OOB Not Available: that TK was for a legacy peer).
    private func hasOutOfBandData(answering request: SMPPairingFeatures?) -> Bool {
        let secureConnections = peerOutOfBand != nil && settings.offersSecureConnections
        let legacy = legacyOutOfBandKey != nil
        guard let request else { return secureConnections || legacy }
        let willUseSecureConnections = settings.offersSecureConnections && request.authenticationRequirements.contains(.secureConnections)
        return willUseSecureConnections ? secureConnections : legacy
    }

    /// Both sides set the Keypress flag: Keypress Notifications are generated and processed in
    /// Passkey Entry (Vol 3, Part H, 3.5.1).
    var keypressAgreed: Bool {
        guard let request, let response else { return false }
        return request.authenticationRequirements.contains(.keypress) && response.authenticationRequirements.contains(.keypress)
    }

    /// Whether the peer's user types the passkey in this pairing.
    var peerTypesPasskey: Bool {
        guard case let .passkeyEntry(initiatorDisplays, responderDisplays) = method else { return false }
        return role == .initiator ? !responderDisplays : !initiatorDisplays
    }

    // MARK: Phase 1

    /// Initiator: sends the Pairing Request (Vol 3, Part H, 2.3.5.1).
    mutating func start() -> [Action] {
        guard role == .initiator, phase == .idle else { return [] }
        let features = localFeatures()
        request = features
        phase = .awaitingResponse
        return [.send(.pairingRequest(features))]
    }

    /// Feeds one SMP PDU from the peer.
    mutating func receive(_ pdu: SMPPDU) -> [Action] {
        guard !isFinished else { return [] }
        if case let .pairingFailed(reason) = pdu {
            phase = .failed
            return [.fail(.peerFailed(reason))]
        }
        if case let .keypressNotification(type) = pdu { return receiveKeypress(type) }
        switch (phase, pdu) {
        case let (.idle, .pairingRequest(features)) where role == .responder:
            return respond(to: features)
        case let (.awaitingResponse, .pairingResponse(features)) where role == .initiator:
            return accept(features)
        case let (.legacyAwaitingConfirm, .pairingConfirm(value)), let (.legacyAwaitingPasskey, .pairingConfirm(value)):
            return legacyReceiveConfirm(value)
        case let (.legacyAwaitingRandom, .pairingRandom(value)):
            return legacyReceiveRandom(value)
        case let (.scAwaitingPublicKey, .pairingPublicKey(key)):
            return scReceivePublicKey(key)
        case let (.scAwaitingCommitment, .pairingConfirm(value)):
            return scReceiveCommitment(value)
        case let (.scAwaitingNonce, .pairingRandom(value)):
            return scReceiveNonce(value)
        case let (.scAwaitingDHKeyCheck, .pairingDHKeyCheck(value)):
            return scReceiveDHKeyCheck(value)
        case (.distributingKeys, _):
            return receiveKey(pdu)
        default:
            // An SMP command the procedure does not expect now (Vol 3, Part H, 3.3).
            return fail(.unspecifiedReason, .unexpectedPDU(pdu.code))
        }
    }

    /// Responder: checks the Pairing Request and answers with this device's features.
    private mutating func respond(to features: SMPPairingFeatures) -> [Action] {
        guard (7...16).contains(features.maximumEncryptionKeySize) else {
            return fail(.invalidParameters, .invalidFeatures("maximum key size \(features.maximumEncryptionKeySize)"))
        }
        var answer = localFeatures(answering: features)
        // Distribute only what both want (Vol 3, Part H, 3.6.1): the responder's fields are
        // the final ones.
        answer.initiatorKeyDistribution = features.initiatorKeyDistribution.intersection(answer.initiatorKeyDistribution)
        answer.responderKeyDistribution = features.responderKeyDistribution.intersection(answer.responderKeyDistribution)
        if !features.authenticationRequirements.contains(.bonding) {
            answer.initiatorKeyDistribution = []
            answer.responderKeyDistribution = []
        }
        request = features
        response = answer
        if let refusal = negotiate() { return refusal }
        if let consent = askReplacementIfWeaker() { return consent }
        return [.send(.pairingResponse(answer))] + beginPhase2()
    }

    /// Initiator: checks the Pairing Response.
    private mutating func accept(_ features: SMPPairingFeatures) -> [Action] {
        guard let request else { return fail(.unspecifiedReason, .unexpectedPDU(.pairingResponse)) }
        guard (7...16).contains(features.maximumEncryptionKeySize) else {
            return fail(.invalidParameters, .invalidFeatures("maximum key size \(features.maximumEncryptionKeySize)"))
        }
        // The responder may only take away keys the initiator offered (Vol 3, Part H, 3.6.1).
        guard request.initiatorKeyDistribution.isSuperset(of: features.initiatorKeyDistribution),
              request.responderKeyDistribution.isSuperset(of: features.responderKeyDistribution) else {
            return fail(.invalidParameters, .invalidFeatures("key distribution beyond the request"))
        }
        response = features
        if let refusal = negotiate() { return refusal }
        if let consent = askReplacementIfWeaker() { return consent }
        return beginPhase2()
    }

    /// Method, key size and mode from both features, or the refusal.
    private mutating func negotiate() -> [Action]? {
        guard let request, let response else { return nil }
        isSecureConnections = request.authenticationRequirements.contains(.secureConnections)
            && response.authenticationRequirements.contains(.secureConnections)
        // Secure Connections Only mode is security level 4 (Vol 3, Part C, 10.2.4): LE Secure
        // Connections, an authenticated method and a 128-bit key, each refused with its reason
        // (Part H, 2.3.5.1 and 2.3.4).
        if settings.secureConnectionsOnly && !isSecureConnections {
            return fail(.authenticationRequirements, .secureConnectionsRequired)
        }
        keySize = Int(min(request.maximumEncryptionKeySize, response.maximumEncryptionKeySize))
        guard keySize >= settings.effectiveMinimumKeySize else {
            return fail(.encryptionKeySize, .keySizeTooSmall(keySize))
        }
        method = PairingMethod.select(request: request, response: response, secureConnections: isSecureConnections)
        // The budget of passkey guesses across all peers is spent (PairingAttempts): Repeated
        // Attempts (Part H, 2.3.6) for this method only; the others stay open.
        if case .passkeyEntry = method, let wait = passkeyEntryClosed {
            return fail(.repeatedAttempts, .repeatedAttempts(retryAfter: wait))
        }
        if method == .outOfBand {
            // Legacy OOB needs the TK both sides got out of band (Vol 3, Part H, 2.3.5.4). With LE
            // Secure Connections, a peer that says it has our data needs us to have made some,
            // and our flag must have meant the peer's r and C, not a legacy TK (2.3.5.6.4).
            let peerHasOurs = (role == .initiator ? response : request).oobDataPresent
            let weHaveTheirs = (role == .initiator ? request : response).oobDataPresent
            if isSecureConnections {
                if (peerHasOurs && localOutOfBand == nil) || (weHaveTheirs && peerOutOfBand == nil) {
                    return fail(.oobNotAvailable, .outOfBandUnavailable)
                }
            } else if legacyOutOfBandKey == nil {
                return fail(.oobNotAvailable, .outOfBandUnavailable)
            }
        }
        if settings.requiresAuthentication && !method.isAuthenticated {
            return fail(.authenticationRequirements, .authenticationRequired)
        }
        isBonding = request.authenticationRequirements.contains(.bonding) && response.authenticationRequirements.contains(.bonding)
        var initiatorKeys = response.initiatorKeyDistribution
        var responderKeys = response.responderKeyDistribution
        // EncKey is ignored with LE Secure Connections and LinkKey is never used
        // (cross-transport key derivation off) (Vol 3, Part H, 3.6.1).
        initiatorKeys.remove(.linkKey)
        responderKeys.remove(.linkKey)
        if isSecureConnections {
            initiatorKeys.remove(.encryptionKey)
            responderKeys.remove(.encryptionKey)
        }
        keysToSend = role == .initiator ? initiatorKeys : responderKeys
        expectedPeerKeys = role == .initiator ? responderKeys : initiatorKeys
        return nil
    }

    private mutating func beginPhase2() -> [Action] {
        isSecureConnections ? scBegin() : legacyBegin()
    }

    /// What this pairing's key will be worth.
    var proposedStrength: KeyStrength {
        KeyStrength(isAuthenticated: method.isAuthenticated, isSecureConnections: isSecureConnections, keySize: keySize)
    }

    /// A bonding pairing weaker than the peer's bond waits for the agent (nothing is stored
    /// without bonding, so nothing is replaced).
    private mutating func askReplacementIfWeaker() -> [Action]? {
        guard let bonded, isBonding else { return nil }
        let candidate = BondReplacement(identity: bonded.peerIdentity, bonded: bonded.strength, proposed: proposedStrength,
                                        isClaimedIdentity: false)
        replacement = candidate
        guard candidate.isWeaker else { return nil }
        phase = .awaitingReplacementConsent
        return [.askReplacement(candidate)]
    }

    /// The agent answered ``Action/askReplacement(_:)``: phase 2 starts (a responder sends its
    /// Pairing Response first), or the pairing fails with the reason that names what the new
    /// key lacks: Encryption Key Size for a shorter key alone, else Authentication Requirements.
    mutating func replacementAnswered(_ allowed: Bool) -> [Action] {
        guard phase == .awaitingReplacementConsent, let replacement, let response else { return [] }
        guard allowed else {
            let (bonded, proposed) = (replacement.bonded, replacement.proposed)
            let losesProtection = (bonded.isAuthenticated && !proposed.isAuthenticated) || (bonded.isSecureConnections && !proposed.isSecureConnections)
            return fail(losesProtection ? .authenticationRequirements : .encryptionKeySize, .weakerThanBond(replacement))
        }
        return role == .responder ? [.send(.pairingResponse(response))] + beginPhase2() : beginPhase2()
    }

    // MARK: User answers

    /// The user typed a passkey (`nil`: the user cancelled). With Keypress Notifications agreed,
    /// the peer hears that entry completed before the pairing goes on.
    mutating func passkeyEntered(_ value: UInt32?) -> [Action] {
        guard !isFinished, passkey == nil, awaitsPasskeyEntry else { return [] }
        guard let value, value <= 999_999 else { return fail(.passkeyEntryFailed, .userRejected) }
        passkey = value
        let completed: [Action] = keypressAgreed ? [.send(.keypressNotification(.passkeyEntryCompleted))] : []
        return completed + (isSecureConnections ? scPasskeyKnown() : legacyPasskeyKnown())
    }

    /// A Keypress Notification from the peer (Vol 3, Part H, 3.5.8): passed on while the peer's
    /// user types the passkey this side shows, when both sides asked for them, at most
    /// ``maximumKeypresses`` per pairing; otherwise ignored (never a failure, and never a reason
    /// to restart the Security Manager Timer: only this device's PDUs restart it, 3.4).
    private mutating func receiveKeypress(_ type: SMPKeypressNotificationType) -> [Action] {
        guard keypressAgreed, peerTypesPasskey, keypressCount < Self.maximumKeypresses else { return [] }
        keypressCount += 1
        return [.keypress(type)]
    }

    /// The user answered a Numeric Comparison.
    mutating func numberConfirmed(_ matches: Bool) -> [Action] {
        guard !isFinished, method == .numericComparison, !userConfirmed else { return [] }
        guard matches else { return fail(.numericComparisonFailed, .userRejected) }
        userConfirmed = true
        return scUserConfirmed()
    }

    /// Whether a failure of this pairing gave the peer a guess at a secret: a Passkey Entry
    /// pairing that got as far as a passkey (shown or typed here). Each failure is a fresh
    /// guess at a six-digit number, and a passkey this side's user always types the same (a
    /// printed PIN) leaks about a bit per failed attempt to a peer that aborts at the right
    /// commitment (Core 6.0, Vol 3, Part H, 2.3.5.6.3). Just Works has no secret; a Numeric
    /// Comparison needs the user to answer each attempt and its number is new each time; OOB
    /// data's 128-bit values are not guessed.
    var gaveGuessAtSecret: Bool {
        guard case .passkeyEntry = method else { return false }
        return passkey != nil
    }

    /// Whether this side is the one that types the passkey.
    var awaitsPasskeyEntry: Bool {
        guard case let .passkeyEntry(initiatorDisplays, responderDisplays) = method else { return false }
        return role == .initiator ? !initiatorDisplays : !responderDisplays
    }

    /// For Passkey Entry: the displayed passkey (this side displays) or a prompt to type one.
    mutating func passkeyPrompt() -> [Action] {
        if awaitsPasskeyEntry {
            let started: [Action] = keypressAgreed ? [.send(.keypressNotification(.passkeyEntryStarted))] : []
            return started + [.prompt(.enterPasskey)]
        }
        let value = random.passkey()
        passkey = value
        return [.prompt(.displayPasskey(value))]
    }

    // MARK: Encryption

    /// Responder: the key for the controller's LTK Request during this pairing (EDIV and Rand
    /// are 0 for both the STK and an LE Secure Connections LTK), or `nil` when the pairing is
    /// not waiting for encryption.
    func keyForEncryption(ediv: UInt16, rand: UInt64) -> UInt128? {
        guard role == .responder, phase == .awaitingEncryption, ediv == 0, rand == 0 else { return nil }
        return encryptionKey
    }

    /// The link's encryption changed (Encryption Change): phase 3 starts, or the pairing fails.
    mutating func encryptionChanged(success: Bool) -> [Action] {
        guard phase == .awaitingEncryption else { return [] }
        guard success else {
            phase = .failed
            return [.fail(.encryptionFailed)]
        }
        return beginKeyDistribution()
    }

    /// The Security Manager Timer ran out (Vol 3, Part H, 3.4): no Pairing Failed is sent.
    mutating func timedOut() -> [Action] {
        guard !isFinished else { return [] }
        phase = .failed
        return [.fail(.timeout)]
    }

    /// The app or the host cancels: Pairing Failed with `reason` goes to the peer.
    mutating func cancel(reason: SMPPairingFailureReason = .unspecifiedReason) -> [Action] {
        guard !isFinished else { return [] }
        return fail(reason, .cancelled)
    }

    // MARK: Helpers

    mutating func fail(_ reason: SMPPairingFailureReason, _ failure: PairingFailure) -> [Action] {
        phase = .failed
        return [.send(.pairingFailed(reason)), .fail(failure.sent(reason))]
    }

    mutating func moveTo(_ next: Phase) {
        phase = next
        // Every path to encryption goes through the peer's check (PairingProcedure+Legacy,
        // +SecureConnections).
        if next == .awaitingEncryption { peerPassedChecks = true }
    }

    /// The key masked to the negotiated size (Vol 3, Part H, 2.3.4): the most significant
    /// octets are zeroed.
    func masked(_ key: UInt128) -> UInt128 {
        keySize >= 16 ? key : key & ((UInt128(1) << (8 * keySize)) - 1)
    }

    /// The outcome once both sides distributed their keys.
    var outcome: PairingOutcome {
        PairingOutcome(method: method, isSecureConnections: isSecureConnections, keySize: keySize, isBonding: isBonding,
                       peerKeys: peerKeys, localKeys: localKeys, droppedIdentityAddress: droppedIdentityAddress)
    }
}
