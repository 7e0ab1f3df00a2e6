import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("Pairing procedure against a hostile peer")
struct PairingProcedureHostileTests {
    static let settings = SecurityManagerSettings()

    static func responder() -> PairingProcedure {
        PairingProcedure(role: .responder, settings: settings, initiatorAddress: PairingHarness.central,
                         responderAddress: PairingHarness.peripheral, localIdentity: PairingHarness.peripheral,
                         localIdentityResolvingKey: 1)
    }

    static func initiator() -> PairingProcedure {
        PairingProcedure(role: .initiator, settings: settings, initiatorAddress: PairingHarness.central,
                         responderAddress: PairingHarness.peripheral, localIdentity: PairingHarness.central,
                         localIdentityResolvingKey: 1)
    }

    static let request = SMPPairingFeatures(ioCapability: .noInputNoOutput, authenticationRequirements: [.bonding, .secureConnections],
                                            initiatorKeyDistribution: [.identityKey], responderKeyDistribution: [.identityKey])

    /// The failure a procedure reports, and the reason it sent.
    static func failure(_ actions: [PairingProcedure.Action]) -> (sent: SMPPairingFailureReason?, failure: PairingFailure?) {
        var sent: SMPPairingFailureReason?
        var failure: PairingFailure?
        for action in actions {
            if case let .send(.pairingFailed(reason)) = action { sent = reason }
            if case let .fail(reported) = action { failure = reported }
        }
        return (sent, failure)
    }

    @Test("PDUs out of order get Pairing Failed, Unspecified Reason, and end the procedure", arguments: [
        SMPPDU.pairingRandom(randomValue: 1), .pairingConfirm(confirmValue: 2), .pairingDHKeyCheck(dhKeyCheck: 3),
        .encryptionInformation(longTermKey: 4), .pairingResponse(request),
    ])
    func outOfOrder(pdu: SMPPDU) {
        var procedure = Self.responder()
        let outcome = Self.failure(procedure.receive(pdu))
        #expect(outcome.sent == .unspecifiedReason)
        #expect(outcome.failure?.reason == .unspecifiedReason)
        #expect(procedure.isFinished)
        // Nothing more comes out of a failed procedure.
        #expect(procedure.receive(.pairingRequest(Self.request)).isEmpty)
    }

    @Test("A public key that is not on P-256 fails with DHKey Check Failed")
    func publicKeyOffTheCurve() throws {
        var procedure = Self.responder()
        _ = procedure.receive(.pairingRequest(Self.request))
        let offCurve = try #require(SMPPublicKey(x: [UInt8](repeating: 1, count: 32), y: [UInt8](repeating: 2, count: 32)))
        let outcome = Self.failure(procedure.receive(.pairingPublicKey(offCurve)))
        #expect(outcome.sent == .dhKeyCheckFailed)
        #expect(outcome.failure == .refused(reason: .dhKeyCheckFailed, cause: .invalidPublicKey))
    }

    @Test("Our own public key sent back is refused")
    func reflectedPublicKey() throws {
        var initiator = Self.initiator()
        let sent = initiator.start()
        #expect(sent.count == 1)
        _ = initiator.receive(.pairingResponse(Self.request))
        let ours = try #require(initiator.keyPair)
        let reflected = SMPPublicKey(mostSignificantFirstX: ours.publicKeyX, y: ours.publicKeyY)
        let outcome = Self.failure(initiator.receive(.pairingPublicKey(reflected)))
        #expect(outcome.failure == .refused(reason: .unspecifiedReason, cause: .invalidPublicKey))
    }

    @Test("A confirm value that does not match its nonce fails with Confirm Value Failed")
    func confirmMismatch() {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings)
        pairing.tamper = { fromInitiator, pdu in
            if !fromInitiator, case let .pairingConfirm(value) = pdu { return .pairingConfirm(confirmValue: value ^ 1) }
            return pdu
        }
        pairing.run()
        #expect(pairing.initiatorFailure == .refused(reason: .confirmValueFailed, cause: .confirmValueMismatch))
        #expect(pairing.responderFailure == .peerFailed(.confirmValueFailed))
    }

    @Test("A DHKey check that does not match fails with DHKey Check Failed")
    func dhKeyCheckMismatch() {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings)
        pairing.tamper = { fromInitiator, pdu in
            if fromInitiator, case let .pairingDHKeyCheck(value) = pdu { return .pairingDHKeyCheck(dhKeyCheck: value ^ 1) }
            return pdu
        }
        pairing.run()
        #expect(pairing.responderFailure == .refused(reason: .dhKeyCheckFailed, cause: .dhKeyCheckMismatch))
        #expect(pairing.encryptionKeys.initiator == nil)
    }

    @Test("Keys out of order in phase 3 fail the pairing")
    func keysOutOfOrder() {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings)
        pairing.tamper = { fromInitiator, pdu in
            // The peripheral sends its identity address before its IRK.
            if !fromInitiator, case .identityInformation = pdu {
                return .identityAddressInformation(PairingHarness.peripheral)
            }
            return pdu
        }
        pairing.run()
        #expect(pairing.initiatorFailure?.reason == .unspecifiedReason)
        #expect(pairing.initiatorOutcome == nil)
    }

    /// An address of someone else, which a lying peer claims as its identity.
    static let otherIdentity = DeviceAddress(BluetoothAddress(rawValue: 0xDA_4C_10_DE_17_00), type: .public)

    /// A peer that pairs from an identity address (public or static random) is that device; an
    /// identity address information naming another is a lie or a bug (the Microsoft Surface
    /// Precision Mouse's; Bumble's on a controller with a public address). Its identity and IRK
    /// are dropped, as Linux does (net/bluetooth/smp.c), so the bond stays under the address it
    /// paired from and cannot take over another device's bond.
    @Test("A peer paired from an identity address that distributes another: identity and IRK dropped, pairing completes",
          arguments: [true, false])
    func identityOtherThanPairingAddress(peerIsResponder: Bool) throws {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings)
        pairing.tamper = { fromInitiator, pdu in
            if fromInitiator != peerIsResponder, case .identityAddressInformation = pdu {
                return .identityAddressInformation(Self.otherIdentity)
            }
            return pdu
        }
        pairing.run()
        let ours = try #require(peerIsResponder ? pairing.initiatorOutcome : pairing.responderOutcome)
        #expect(ours.peerKeys.identityAddress == nil && ours.peerKeys.identityResolvingKey == nil, "\(ours.peerKeys)")
        #expect(ours.peerKeys.longTermKey != nil)
        #expect(ours.isBonding)
        let theirs = try #require(peerIsResponder ? pairing.responderOutcome : pairing.initiatorOutcome)
        #expect(theirs.peerKeys.identityAddress != nil, "our own identity still goes to the peer")
    }

    @Test("A peer paired from a resolvable private address keeps the identity and IRK it distributes")
    func identityBehindPrivateAddress() throws {
        let privateAddress = DeviceAddress(BluetoothAddress(rawValue: 0x4A_11_22_33_44_55), type: .random)
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings, addresses: (PairingHarness.central, privateAddress))
        pairing.run()
        let ours = try #require(pairing.initiatorOutcome)
        #expect(ours.peerKeys.identityAddress == PairingHarness.peripheral)
        #expect(ours.peerKeys.identityResolvingKey == 0x2222)
    }

    /// An all-zero IRK is what a device without one sends (Bumble's default): anybody can make
    /// addresses that "resolve" with it, so taking it would let any device appear as this peer
    /// in scans, and a controller's resolving list takes all zeros as "no IRK".
    @Test("An all-zero IRK is no IRK: the identity is kept, the IRK is not", arguments: [true, false])
    func allZeroIRK(fromPrivateAddress: Bool) throws {
        let privateAddress = DeviceAddress(BluetoothAddress(rawValue: 0x4A_11_22_33_44_55), type: .random)
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings,
                                     addresses: (PairingHarness.central, fromPrivateAddress ? privateAddress : PairingHarness.peripheral))
        pairing.tamper = { fromInitiator, pdu in
            if !fromInitiator, case .identityInformation = pdu { return .identityInformation(identityResolvingKey: 0) }
            return pdu
        }
        pairing.run()
        let ours = try #require(pairing.initiatorOutcome)
        #expect(ours.peerKeys.identityResolvingKey == nil, "\(ours.peerKeys)")
        #expect(ours.peerKeys.identityAddress == PairingHarness.peripheral)
        #expect(ours.isBonding && ours.peerKeys.longTermKey != nil)
    }

    @Test("An identity address that is neither public nor static random is dropped with its IRK", arguments: [
        DeviceAddress(BluetoothAddress(rawValue: 0x4A_11_22_33_44_55), type: .random), // resolvable private
        DeviceAddress(BluetoothAddress(rawValue: 0x0A_11_22_33_44_55), type: .random), // non-resolvable private
        DeviceAddress(.zero, type: .public),
    ])
    func notAnIdentityAddress(_ claimed: DeviceAddress) throws {
        let privateAddress = DeviceAddress(BluetoothAddress(rawValue: 0x4A_11_22_33_44_55), type: .random)
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings, addresses: (PairingHarness.central, privateAddress))
        pairing.tamper = { fromInitiator, pdu in
            if !fromInitiator, case .identityAddressInformation = pdu { return .identityAddressInformation(claimed) }
            return pdu
        }
        pairing.run()
        let ours = try #require(pairing.initiatorOutcome)
        #expect(ours.peerKeys.identityAddress == nil && ours.peerKeys.identityResolvingKey == nil, "\(ours.peerKeys)")
    }

    @Test("A response that adds keys the request did not offer is refused with Invalid Parameters")
    func responseBeyondRequest() {
        var initiator = Self.initiator()
        _ = initiator.start()
        var response = Self.request
        response.responderKeyDistribution = [.identityKey, .signingKey, .encryptionKey, .linkKey]
        let outcome = Self.failure(initiator.receive(.pairingResponse(response)))
        #expect(outcome.sent == .invalidParameters)
    }

    @Test("A maximum key size outside 7…16 is refused with Invalid Parameters", arguments: [0, 6, 17, 255])
    func keySizeOutOfRange(size: UInt8) {
        var features = Self.request
        features.maximumEncryptionKeySize = size
        var procedure = Self.responder()
        #expect(Self.failure(procedure.receive(.pairingRequest(features))).sent == .invalidParameters)
    }

    @Test("A peer claiming our OOB data fails with OOB Not Available")
    func outOfBandClaim() {
        var features = Self.request
        features.oobDataPresent = true
        var procedure = Self.responder()
        #expect(Self.failure(procedure.receive(.pairingRequest(features))).sent == .oobNotAvailable)
    }

    @Test("The SMP timeout fails the procedure without a Pairing Failed; Pairing Failed from the peer is reported")
    func timeoutAndPeerFailure() {
        var procedure = Self.responder()
        _ = procedure.receive(.pairingRequest(Self.request))
        let actions = procedure.timedOut()
        #expect(actions == [.fail(.timeout)])
        var other = Self.responder()
        _ = other.receive(.pairingRequest(Self.request))
        #expect(other.receive(.pairingFailed(.passkeyEntryFailed)) == [.fail(.peerFailed(.passkeyEntryFailed))])
    }

    @Test("An LTK request outside the pairing's encryption step gets no key")
    func keyOnlyWhenAwaited() {
        var procedure = Self.responder()
        _ = procedure.receive(.pairingRequest(Self.request))
        #expect(procedure.keyForEncryption(ediv: 0, rand: 0) == nil)
    }

    @Test("A Pairing Request to the initiator is out of order")
    func requestToInitiator() {
        var initiator = Self.initiator()
        _ = initiator.start()
        #expect(Self.failure(initiator.receive(.pairingRequest(Self.request))).sent == .unspecifiedReason)
    }
}
