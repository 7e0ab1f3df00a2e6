import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("Pairing procedure: every method, both roles, no I/O")
struct PairingProcedureTests {
    static let justWorks = SecurityManagerSettings(ioCapability: .noInputNoOutput)

    /// Settings of a device that offers legacy pairing only.
    static func legacy(_ settings: SecurityManagerSettings = justWorks) -> SecurityManagerSettings {
        var legacy = settings
        legacy.offersSecureConnections = false
        return legacy
    }

    @Test("LE Secure Connections Just Works: same LTK on both sides, unauthenticated, keys distributed")
    func secureConnectionsJustWorks() throws {
        var pairing = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks)
        pairing.run()
        let central = try #require(pairing.initiatorOutcome)
        let peripheral = try #require(pairing.responderOutcome)
        #expect(central.method == .justWorks && central.isSecureConnections && central.keySize == 16 && central.isBonding)
        #expect(!central.security.isAuthenticated && central.security.level == 2)
        // One LTK for both (f5), and it is the one the link was encrypted with.
        #expect(central.peerKeys.longTermKey == peripheral.localKeys.longTermKey)
        #expect(central.peerKeys.longTermKey == pairing.encryptionKeys.initiator)
        #expect(pairing.encryptionKeys.initiator == pairing.encryptionKeys.responder)
        // Identity and signing keys cross over; no legacy EDIV/Rand with Secure Connections.
        #expect(central.peerKeys.identityResolvingKey == 0x2222 && central.peerKeys.identityAddress == PairingHarness.peripheral)
        #expect(peripheral.peerKeys.identityResolvingKey == 0x1111 && peripheral.peerKeys.identityAddress == PairingHarness.central)
        #expect(central.peerKeys.signatureKey == peripheral.localKeys.signatureKey && central.peerKeys.signatureKey != nil)
        #expect(!pairing.transcript.contains { $0.pdu.code == .centralIdentification })
        #expect(pairing.initiatorPrompts.isEmpty && pairing.responderPrompts.isEmpty)
    }

    @Test("Numeric Comparison: both users see the same number; both confirm")
    func numericComparison() throws {
        let settings = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        var pairing = PairingHarness(initiator: settings, responder: settings)
        pairing.run()
        let central = try #require(pairing.initiatorOutcome)
        #expect(central.method == .numericComparison && central.security.isAuthenticated && central.security.level == 4)
        guard case let .confirmNumber(shown)? = pairing.initiatorPrompts.first else {
            Issue.record("no number shown: \(pairing.initiatorPrompts)")
            return
        }
        #expect(pairing.responderPrompts == [.confirmNumber(shown)])
        #expect(shown < 1_000_000)
        #expect(pairing.responderOutcome != nil)
    }

    @Test("Numeric Comparison refused by the responder's user: Numeric Comparison Failed on both")
    func numericComparisonRefused() {
        let settings = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        var pairing = PairingHarness(initiator: settings, responder: settings)
        pairing.responderConfirms = false
        pairing.run()
        #expect(pairing.responderFailure?.reason == .numericComparisonFailed)
        #expect(pairing.initiatorFailure == .peerFailed(.numericComparisonFailed))
    }

    @Test("Passkey Entry, Secure Connections, each display/type arrangement", arguments: [
        (SMPIOCapability.displayOnly, SMPIOCapability.keyboardOnly),
        (.keyboardOnly, .displayOnly),
        (.keyboardOnly, .keyboardOnly),
        (.keyboardDisplay, .keyboardOnly),
    ])
    func passkeyEntry(initiatorIO: SMPIOCapability, responderIO: SMPIOCapability) throws {
        var pairing = PairingHarness(initiator: SecurityManagerSettings(ioCapability: initiatorIO, requiresMITM: true),
                                     responder: SecurityManagerSettings(ioCapability: responderIO, requiresMITM: true))
        if initiatorIO == .keyboardOnly && responderIO == .keyboardOnly {
            pairing.typedPasskey = { _ in 123_456 }
        }
        pairing.run()
        let central = try #require(pairing.initiatorOutcome, "\(String(describing: pairing.initiatorResult))")
        #expect(pairing.responderOutcome != nil)
        #expect(central.security.isAuthenticated && central.isSecureConnections)
        // 20 rounds of commitment and nonce from each side (Vol 3, Part H, 2.3.5.6.3).
        #expect(pairing.transcript.filter { $0.pdu.code == .pairingConfirm }.count == 40)
        #expect(pairing.transcript.filter { $0.pdu.code == .pairingRandom }.count == 40)
    }

    @Test("Passkey Entry with a wrong passkey fails with Confirm Value Failed, Secure Connections and legacy", arguments: [true, false])
    func wrongPasskey(secureConnections: Bool) {
        let initiator = SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true)
        var pairing = PairingHarness(initiator: secureConnections ? initiator : Self.legacy(initiator),
                                     responder: SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true))
        pairing.typedPasskey = { displayed in ((displayed ?? 0) + 1) % 1_000_000 }
        pairing.run()
        #expect(pairing.initiatorFailure?.reason == .confirmValueFailed || pairing.responderFailure?.reason == .confirmValueFailed)
        #expect(pairing.initiatorOutcome == nil && pairing.responderOutcome == nil)
        #expect(pairing.encryptionKeys.initiator == nil)
    }

    /// Clears the SC flag of both pairing features in flight: a legacy-only peer.
    static func withoutSecureConnections(_ fromInitiator: Bool, _ pdu: SMPPDU) -> SMPPDU? {
        switch pdu {
        case var .pairingRequest(features):
            features.authenticationRequirements.remove(.secureConnections)
            return .pairingRequest(features)
        case var .pairingResponse(features):
            features.authenticationRequirements.remove(.secureConnections)
            return .pairingResponse(features)
        default: return pdu
        }
    }

    @Test("A PDU changed in flight (a device in the middle) fails the legacy confirm check")
    func tamperedFeatures() {
        var pairing = PairingHarness(initiator: Self.justWorks, responder: Self.justWorks)
        // Both sides then disagree on the features c1 covers.
        pairing.tamper = Self.withoutSecureConnections
        pairing.run()
        #expect(pairing.responderFailure?.reason == .confirmValueFailed)
        #expect(pairing.encryptionKeys.initiator == nil)
    }

    @Test("Legacy Just Works: STK encryption, the LTK with EDIV and Rand distributed both ways")
    func legacyJustWorks() throws {
        var pairing = PairingHarness(initiator: Self.legacy(), responder: Self.justWorks)
        pairing.run()
        let central = try #require(pairing.initiatorOutcome)
        let peripheral = try #require(pairing.responderOutcome)
        #expect(!central.isSecureConnections && central.method == .justWorks && central.security.level == 2)
        #expect(pairing.encryptionKeys.initiator == pairing.encryptionKeys.responder)
        // The peripheral's LTK, EDIV and Rand are what the central will encrypt with next time.
        #expect(central.peerKeys.longTermKey == peripheral.localKeys.longTermKey && central.peerKeys.longTermKey != nil)
        #expect(central.peerKeys.ediv == peripheral.localKeys.ediv && central.peerKeys.rand == peripheral.localKeys.rand)
        #expect(peripheral.peerKeys.longTermKey == central.localKeys.longTermKey)
        // The STK is not the distributed LTK.
        #expect(central.peerKeys.longTermKey != pairing.encryptionKeys.initiator)
    }

    @Test("Legacy Passkey Entry: the typed passkey authenticates")
    func legacyPasskey() throws {
        var pairing = PairingHarness(initiator: SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true),
                                     responder: Self.legacy(SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true)))
        pairing.run()
        let central = try #require(pairing.initiatorOutcome, "\(String(describing: pairing.initiatorResult))")
        #expect(!central.isSecureConnections && central.security.isAuthenticated && central.security.level == 3)
        #expect(pairing.initiatorPrompts == [.enterPasskey])
        guard case .displayPasskey? = pairing.responderPrompts.first else {
            Issue.record("the responder displayed nothing")
            return
        }
    }

    @Test("Key size: the smaller maximum wins and masks the key; below the minimum fails with Encryption Key Size")
    func keySize() throws {
        var small = PairingHarness(initiator: SecurityManagerSettings(maximumKeySize: 10), responder: Self.justWorks)
        small.run()
        let outcome = try #require(small.initiatorOutcome)
        #expect(outcome.keySize == 10)
        let key = try #require(small.encryptionKeys.initiator)
        #expect(key >> 80 == 0)

        var refused = PairingHarness(initiator: SecurityManagerSettings(maximumKeySize: 7),
                                     responder: SecurityManagerSettings(minimumKeySize: 16))
        refused.run()
        #expect(refused.responderFailure?.reason == .encryptionKeySize)
        #expect(refused.initiatorFailure == .peerFailed(.encryptionKeySize))
    }

    @Test("Secure Connections Only refuses a legacy peer; required MITM refuses Just Works")
    func modeRefusals() {
        var legacy = PairingHarness(initiator: Self.justWorks, responder: SecurityManagerSettings(secureConnectionsOnly: true))
        legacy.tamper = { fromInitiator, pdu in fromInitiator ? Self.withoutSecureConnections(fromInitiator, pdu) : pdu }
        legacy.run()
        #expect(legacy.responderFailure?.reason == .authenticationRequirements)

        var noMITM = PairingHarness(initiator: SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true),
                                    responder: Self.justWorks)
        noMITM.run()
        #expect(noMITM.initiatorFailure?.reason == .authenticationRequirements)
        #expect(noMITM.responderFailure == .peerFailed(.authenticationRequirements))
    }

    @Test("Without bonding no keys are distributed")
    func noBonding() throws {
        var pairing = PairingHarness(initiator: SecurityManagerSettings(bondable: false), responder: Self.justWorks)
        pairing.run()
        let outcome = try #require(pairing.initiatorOutcome)
        #expect(!outcome.isBonding && outcome.peerKeys.identityResolvingKey == nil && outcome.peerKeys.signatureKey == nil)
        #expect(!pairing.transcript.contains { $0.pdu.code == .identityInformation })
    }

    @Test("The same seeds replay the same pairing")
    func deterministic() {
        var first = PairingHarness(initiator: Self.legacy(), responder: Self.justWorks, seed: 7)
        var second = PairingHarness(initiator: Self.legacy(), responder: Self.justWorks, seed: 7)
        first.run()
        second.run()
        #expect(first.transcript.map(\.pdu) == second.transcript.map(\.pdu))
        #expect(first.initiatorOutcome != nil)
    }
}
