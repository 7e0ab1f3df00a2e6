import BluetoothCore
import BluetoothCrypto
@testable import BluetoothHost
import Testing

/// LE legacy out-of-band pairing (Core 6.0, Vol 3, Part H, 2.3.5.4): a 128-bit TK both sides got
/// out of band, used when both set the OOB flag.
@Suite("Pairing procedure: LE legacy out of band")
struct PairingLegacyOutOfBandTests {
    static let legacy = PairingProcedureTests.legacy()
    static let secureConnections = SecurityManagerSettings()
    static let key: UInt128 = 0x0F1E_2D3C_4B5A_6978_8796_A5B4_C3D2_E1F0

    @Test("The same TK on both sides: OOB method, authenticated, no prompts, STK from it; either side legacy-only", arguments: [true, false])
    func sameKey(initiatorLegacyOnly: Bool) throws {
        var pairing = PairingHarness(initiator: initiatorLegacyOnly ? Self.legacy : Self.secureConnections,
                                     responder: initiatorLegacyOnly ? Self.secureConnections : Self.legacy,
                                     legacyOutOfBand: (Self.key, Self.key))
        pairing.run()
        let central = try #require(pairing.initiatorOutcome, "\(String(describing: pairing.initiatorResult))")
        let peripheral = try #require(pairing.responderOutcome, "\(String(describing: pairing.responderResult))")
        #expect(central.method == .outOfBand && peripheral.method == .outOfBand)
        #expect(!central.isSecureConnections && central.security.isAuthenticated && central.security.level == 3)
        #expect(pairing.initiatorPrompts.isEmpty && pairing.responderPrompts.isEmpty)
        // Both OOB flags went out (Vol 3, Part H, 3.5.1).
        let flags = pairing.transcript.compactMap { entry -> Bool? in
            switch entry.pdu {
            case let .pairingRequest(features), let .pairingResponse(features): return features.oobDataPresent
            default: return nil
            }
        }
        #expect(flags == [true, true])
        #expect(pairing.encryptionKeys.initiator == pairing.encryptionKeys.responder && pairing.encryptionKeys.initiator != nil)
        #expect(pairing.initiator.usedLegacyOutOfBand && pairing.responder.usedLegacyOutOfBand)
    }

    @Test("A wrong TK (a device in the middle with its own) fails with Confirm Value Failed, nothing encrypted", arguments: [true, false])
    func wrongKey(wrongAtInitiator: Bool) {
        let wrong = Self.key ^ 1
        var pairing = PairingHarness(initiator: Self.legacy, responder: Self.legacy,
                                     legacyOutOfBand: (wrongAtInitiator ? wrong : Self.key, wrongAtInitiator ? Self.key : wrong))
        pairing.run()
        #expect(pairing.initiatorFailure?.reason == .confirmValueFailed || pairing.responderFailure?.reason == .confirmValueFailed)
        #expect(pairing.initiatorOutcome == nil && pairing.responderOutcome == nil)
        #expect(pairing.encryptionKeys.initiator == nil)
    }

    @Test("Only one side has a TK: no OOB (legacy needs both flags), the IO capabilities decide")
    func oneSide() throws {
        var pairing = PairingHarness(initiator: Self.legacy, responder: Self.legacy, legacyOutOfBand: (Self.key, nil))
        pairing.run()
        #expect(pairing.initiatorOutcome?.method == .justWorks, "\(String(describing: pairing.initiatorResult))")
    }

    /// The responder made LE Secure Connections data of its own, so it goes on with OOB when the
    /// initiator's flag is set; the initiator, whose flag meant a TK, has no r and C of the
    /// responder's and stops at once.
    @Test("A TK for a peer that pairs with LE Secure Connections: the initiator's flag meant a TK, OOB Not Available")
    func tkWithSecureConnectionsPeer() {
        let responderData = LocalOutOfBand(keyPair: SecureConnectionsKeyPair(), random: 0xB2B2)
        var pairing = PairingHarness(initiator: Self.secureConnections, responder: Self.secureConnections,
                                     outOfBand: (initiator: (nil, nil), responder: (responderData, nil)), legacyOutOfBand: (Self.key, nil))
        pairing.run()
        #expect(pairing.initiatorFailure == .refused(reason: .oobNotAvailable, cause: .outOfBandUnavailable))
        #expect(!pairing.transcript.contains { $0.pdu.code == .pairingPublicKey }, "stopped before any key")
    }

    @Test("A responder with a TK answers an LE Secure Connections request without the flag: its TK is for legacy pairing")
    func responderFlagFollowsTheRequest() throws {
        var pairing = PairingHarness(initiator: Self.secureConnections, responder: Self.secureConnections, legacyOutOfBand: (nil, Self.key))
        pairing.run()
        #expect(pairing.initiatorOutcome?.method == .justWorks && pairing.initiatorOutcome?.isSecureConnections == true,
                "\(String(describing: pairing.initiatorResult))")
    }
}

/// Keypress Notifications (Core 6.0, Vol 3, Part H, 3.5.8): generated and processed when both
/// sides set the Keypress flag, in Passkey Entry.
@Suite("Pairing procedure: Keypress Notifications")
struct PairingKeypressTests {
    static func settings(_ io: SMPIOCapability, keypress: Bool) -> SecurityManagerSettings {
        SecurityManagerSettings(ioCapability: io, requiresMITM: true, keypressNotifications: keypress)
    }

    @Test("Both ask: the side that types says entry started and completed; the displaying side passes them on", arguments: [true, false])
    func bothAsk(secureConnections: Bool) throws {
        let displays = Self.settings(.displayOnly, keypress: true)
        var pairing = PairingHarness(initiator: secureConnections ? displays : PairingProcedureTests.legacy(displays),
                                     responder: Self.settings(.keyboardOnly, keypress: true))
        pairing.run()
        #expect(pairing.initiatorOutcome != nil, "\(String(describing: pairing.initiatorResult))")
        #expect(pairing.initiatorKeypresses == [.passkeyEntryStarted, .passkeyEntryCompleted])
        #expect(pairing.responderKeypresses.isEmpty, "the typing side is told nothing")
        let request = pairing.transcript.compactMap { entry -> SMPPairingFeatures? in
            if case let .pairingRequest(features) = entry.pdu { features } else { nil }
        }.first
        #expect(request?.authenticationRequirements.contains(.keypress) == true)
    }

    @Test("One side does not ask: none are sent, and any that come are not passed on")
    func oneAsks() throws {
        var pairing = PairingHarness(initiator: Self.settings(.displayOnly, keypress: true), responder: Self.settings(.keyboardOnly, keypress: false))
        pairing.run()
        #expect(pairing.initiatorOutcome != nil)
        #expect(!pairing.transcript.contains { $0.pdu.code == .keypressNotification })
        #expect(pairing.initiatorKeypresses.isEmpty)
    }

    @Test("The peer's keypresses while its user types: passed on in order, at most 64 per pairing, never a failure")
    func peerKeypresses() throws {
        var initiator = PairingProcedure(role: .initiator, settings: Self.settings(.displayOnly, keypress: true),
                                         initiatorAddress: PairingHarness.central, responderAddress: PairingHarness.peripheral,
                                         localIdentity: PairingHarness.central, localIdentityResolvingKey: 1)
        _ = initiator.start()
        var response = SMPPairingFeatures(ioCapability: .keyboardOnly, oobDataPresent: false,
                                          authenticationRequirements: [.bonding, .mitm, .secureConnections, .keypress],
                                          maximumEncryptionKeySize: 16, initiatorKeyDistribution: [], responderKeyDistribution: [])
        _ = initiator.receive(.pairingResponse(response))
        #expect(initiator.peerTypesPasskey && initiator.keypressAgreed)
        let typed: [SMPKeypressNotificationType] = [.passkeyEntryStarted, .passkeyDigitEntered, .passkeyDigitErased, .passkeyCleared]
        var delivered: [SMPKeypressNotificationType] = []
        for type in typed + Array(repeating: .passkeyDigitEntered, count: 100) {
            for action in initiator.receive(.keypressNotification(type)) {
                if case let .keypress(passed) = action { delivered.append(passed) } else { Issue.record("unexpected \(action)") }
            }
        }
        #expect(Array(delivered.prefix(4)) == typed)
        #expect(delivered.count == PairingProcedure.maximumKeypresses)
        #expect(!initiator.isFinished)

        // Without the peer's flag, the same PDUs change nothing.
        var other = PairingProcedure(role: .initiator, settings: Self.settings(.displayOnly, keypress: true),
                                     initiatorAddress: PairingHarness.central, responderAddress: PairingHarness.peripheral,
                                     localIdentity: PairingHarness.central, localIdentityResolvingKey: 1)
        _ = other.start()
        response.authenticationRequirements.remove(.keypress)
        _ = other.receive(.pairingResponse(response))
        #expect(other.receive(.keypressNotification(.passkeyDigitEntered)).isEmpty && !other.isFinished)
    }
}
