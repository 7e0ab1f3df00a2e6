import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// A peer that ends the link in the middle of a Passkey Entry pairing, once our commitment is
/// out, has had its guess: against a passkey this device's user always types the same (a
/// printed PIN), each commitment tells it about a bit (Core 6.0, Vol 3, Part H, 2.3.5.6.3), and
/// ending the link instead of failing must not make the next try free.
@Suite("Host: a pairing abandoned by ending the link", .timeLimit(.minutes(1)))
struct HostPairingAbandonTests {
    /// The user types the PIN printed on the device, whatever the peer shows.
    final class PrintedPINAgent: PairingAgent {
        func passkey(for peer: DeviceAddress) async -> UInt32? { 123_456 }
    }

    /// The next SMP PDU our central sends.
    private func nextSMP(_ rig: CentralHostRig) async throws -> [UInt8] {
        while true {
            var bytes = try await rig.peripheral.acl().0.data
            while bytes.count < 4 || bytes.count < 4 + (Int(bytes[0]) | Int(bytes[1]) << 8) {
                bytes += try await rig.peripheral.acl().0.data
            }
            let frame = try L2CAPBasicFrame.decode(bytes)
            if frame.channelID == .securityManager { return frame.payload }
        }
    }

    private func send(_ rig: CentralHostRig, handle: UInt16, _ payload: [UInt8]) throws {
        try rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(channelID: .securityManager, payload: payload))
    }

    @Test func endingTheLinkAfterOurCommitmentCountsAsAFailedGuess() async throws {
        var security = SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true)
        security.failedPairingBudget = 1
        let rig = try await CentralHostRig.make(security: security)
        await rig.host.setPairingAgent(PrintedPINAgent())
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        let pairing = Task { try await rig.host.pair(rig.connection) }

        #expect(try await nextSMP(rig).first == 0x01, "Pairing Request")
        // Display Only, bonding, MITM, Secure Connections: our user types the passkey.
        try send(rig, handle: handle, [0x02, 0x00, 0x00, 0x0D, 0x10, 0x00, 0x00])
        #expect(try await nextSMP(rig).first == 0x0C, "our public key")
        let key = SecureConnectionsKeyPair()
        try send(rig, handle: handle, [0x0C] + key.publicKeyX.reversed() + key.publicKeyY.reversed())
        #expect(try await nextSMP(rig).first == 0x03, "our first commitment, made with the typed passkey")
        // The attacker has what it came for: it ends the link instead of answering.
        #expect(try await rig.peripheral.status(DisconnectCommand(connectionHandle: handle, reason: .remoteUserTerminatedConnection)) == .success)
        await #expect(throws: HostError.self) { try await pairing.value }
        _ = try await rig.connection.waitForDisconnection()

        // It counted: against the peer (its doubling wait), and across peers (a passkey guess).
        #expect(await rig.host.pairingAttemptWait(rig.connection) == .seconds(2))
        #expect(await rig.host.pairingAttempts.passkeyEntryWait(now: BluetoothClock.manual(rig.clock).now, settings: security) == .seconds(60))
        await rig.host.shutdown()
    }
}
