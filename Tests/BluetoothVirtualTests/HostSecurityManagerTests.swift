import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// The Security Manager channel as a peer that lies would use it: malformed requests are
/// refused with the reason that fits, stray pairing steps fail, a good Security Request starts
/// pairing.
@Suite("Host: Security Manager requests", .timeLimit(.minutes(1)))
struct HostSecurityManagerTests {
    /// Sends an SMP PDU from the raw peripheral and returns the next SMP PDU the host sends back.
    private func exchange(_ rig: CentralHostRig, handle: UInt16, _ sent: [[UInt8]]) async throws -> [UInt8] {
        for payload in sent {
            try rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(channelID: .securityManager, payload: payload))
        }
        let frame = try L2CAPBasicFrame.decode(try await rig.peripheral.acl().0.data)
        #expect(frame.channelID == .securityManager)
        return frame.payload
    }

    @Test func requestsToPairAreRefusedWithTheReasonThatFits() async throws {
        let rig = try await CentralHostRig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        // A Security Request with its AuthReq byte missing: Invalid Parameters.
        #expect(try await exchange(rig, handle: handle, [[0x0B]]) == SMPPDU.pairingFailed(.invalidParameters).encode())
        // A Pairing Request one byte short, and one a byte too long.
        #expect(try await exchange(rig, handle: handle, [[0x01, 0x03, 0x00, 0x01, 0x10, 0x07]])
            == SMPPDU.pairingFailed(.invalidParameters).encode())
        #expect(try await exchange(rig, handle: handle, [[0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07, 0x00]])
            == SMPPDU.pairingFailed(.invalidParameters).encode())
        // A reserved code and a malformed Pairing Confirm get no answer (nothing to fail); a
        // well-formed Pairing Confirm with no pairing running fails (Unspecified Reason).
        var confirm: [UInt8] = [0x03]
        confirm += [UInt8](repeating: 0xAA, count: 16)
        #expect(try await exchange(rig, handle: handle, [[0x3F, 0x01], [0x03, 0x01], confirm])
            == SMPPDU.pairingFailed(.unspecifiedReason).encode())
        // A well-formed Security Request makes the central start pairing.
        let answer = try await exchange(rig, handle: handle, [[0x0B, 0x01]])
        guard case let .pairingRequest(features) = try SMPPDU.decode(answer) else {
            Issue.record("expected a Pairing Request, got \(answer)")
            return
        }
        #expect(features.authenticationRequirements.contains(.bonding))
        #expect(rig.connection.isConnected)
        await rig.host.shutdown()
    }
}
