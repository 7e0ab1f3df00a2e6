import BluetoothCore
import BluetoothCrypto
@testable import BluetoothHost
import Testing

@Suite("Pairing procedure: LE Secure Connections out of band")
struct PairingOutOfBandTests {
    static let settings = SecurityManagerSettings()
    let centralOOB = LocalOutOfBand(keyPair: SecureConnectionsKeyPair(), random: 0xA1A1)
    let peripheralOOB = LocalOutOfBand(keyPair: SecureConnectionsKeyPair(), random: 0xB2B2)

    @Test("Both sides hold the other's data: OOB method, authenticated, no prompts")
    func bothWays() throws {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings, outOfBand: (
            initiator: (centralOOB, peripheralOOB.data(address: PairingHarness.peripheral)),
            responder: (peripheralOOB, centralOOB.data(address: PairingHarness.central))))
        pairing.run()
        let outcome = try #require(pairing.initiatorOutcome, "\(String(describing: pairing.initiatorResult))")
        #expect(outcome.method == .outOfBand && outcome.security.isAuthenticated && outcome.security.level == 4)
        #expect(pairing.responderOutcome?.method == .outOfBand)
        #expect(pairing.initiatorPrompts.isEmpty && pairing.responderPrompts.isEmpty)
        // No commitments go over the air with OOB.
        #expect(!pairing.transcript.contains { $0.pdu.code == .pairingConfirm })
    }

    @Test("Only the central holds the peripheral's data (a QR code on the device): still OOB")
    func oneWay() throws {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings, outOfBand: (
            initiator: (nil, peripheralOOB.data(address: PairingHarness.peripheral)),
            responder: (peripheralOOB, nil)))
        pairing.run()
        #expect(pairing.initiatorOutcome?.method == .outOfBand, "\(String(describing: pairing.initiatorResult))")
        #expect(pairing.responderOutcome != nil)
    }

    @Test("Data committing to another key (a device in the middle) fails with Confirm Value Failed")
    func wrongCommitment() {
        let impostor = LocalOutOfBand(keyPair: SecureConnectionsKeyPair(), random: 0xB2B2)
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings, outOfBand: (
            initiator: (nil, impostor.data(address: PairingHarness.peripheral)),
            responder: (peripheralOOB, nil)))
        pairing.run()
        #expect(pairing.initiatorFailure?.reason == .confirmValueFailed)
        #expect(pairing.encryptionKeys.initiator == nil)
    }

    @Test("A peer that claims our data when we made none: OOB Not Available")
    func noLocalData() {
        var pairing = PairingHarness(initiator: Self.settings, responder: Self.settings, outOfBand: (
            initiator: (nil, peripheralOOB.data(address: PairingHarness.peripheral)),
            responder: (nil, centralOOB.data(address: PairingHarness.central))))
        pairing.run()
        #expect(pairing.responderFailure?.reason == .oobNotAvailable || pairing.initiatorFailure?.reason == .oobNotAvailable)
    }
}
