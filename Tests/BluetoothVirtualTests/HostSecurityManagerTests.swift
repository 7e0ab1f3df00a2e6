import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Synchronization
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

    // MARK: A lying peripheral on a manual clock

    /// The next whole L2CAP frame the host sends (its ACL fragments joined).
    private func nextFrame(_ rig: CentralHostRig) async throws -> L2CAPBasicFrame {
        var bytes = try await rig.peripheral.acl().0.data
        while bytes.count < 4 || bytes.count < 4 + (Int(bytes[0]) | Int(bytes[1]) << 8) {
            bytes += try await rig.peripheral.acl().0.data
        }
        return try L2CAPBasicFrame.decode(bytes)
    }

    /// The next L2CAP frame the host sends on `channel`, skipping others.
    private func nextFrame(_ rig: CentralHostRig, on channel: L2CAPChannelID = .securityManager) async throws -> [UInt8] {
        while true {
            let frame = try await nextFrame(rig)
            if frame.channelID == channel { return frame.payload }
        }
    }

    private func send(_ rig: CentralHostRig, handle: UInt16, _ payloads: [[UInt8]], on channel: L2CAPChannelID = .securityManager) throws {
        for payload in payloads { try rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(channelID: channel, payload: payload)) }
    }

    /// Sends an Echo Request on the LE signalling channel (not an LE command: Command Reject
    /// comes back). Signalling and SMP reach the host actor in order, so once the reject is
    /// back every SMP PDU sent before it has been handled. Returns the SMP PDUs the host sent
    /// meanwhile.
    private func barrier(_ rig: CentralHostRig, handle: UInt16, identifier: UInt8) async throws -> [[UInt8]] {
        try send(rig, handle: handle, [[0x08, identifier, 0x00, 0x00]], on: .leSignaling)
        var smp: [[UInt8]] = []
        while true {
            let frame = try await nextFrame(rig)
            if frame.channelID == .securityManager { smp.append(frame.payload) }
            if frame.channelID == .leSignaling, frame.payload.first == 0x01, frame.payload.count > 1, frame.payload[1] == identifier { return smp }
        }
    }

    static let pairingResponse: [UInt8] = [0x02, 0x03, 0x00, 0x09, 0x10, 0x00, 0x00]
    static let keypress: [UInt8] = [0x0E, 0x00]

    /// Core 6.0, Vol 3, Part H, 3.4: only this device's own PDUs restart the Security Manager
    /// Timer. A peer that answers with Keypress Notifications every few seconds and never its
    /// public key does not keep the pairing alive: it fails 30 s after our last PDU.
    @Test func keypressNotificationsDoNotKeepAPairingAlive() async throws {
        let rig = try await CentralHostRig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        let failed = Mutex<(any Error)?>(nil)
        let pairing = Task {
            do { _ = try await rig.host.pair(rig.connection) } catch { failed.withLock { $0 = error } }
        }
        #expect(try await nextFrame(rig).first == 0x01, "Pairing Request")
        try send(rig, handle: handle, [Self.pairingResponse])
        #expect(try await nextFrame(rig).first == 0x0C, "our public key, the last PDU we send")
        let sentAt = rig.clock.now
        for (index, second) in [10, 20, 29].enumerated() {
            rig.clock.advance(to: sentAt + .seconds(second))
            try send(rig, handle: handle, [Self.keypress, Self.keypress])
            #expect(try await barrier(rig, handle: handle, identifier: UInt8(index + 1)).isEmpty)
        }
        #expect(failed.withLock { $0 } == nil, "still pairing 29 s after our last PDU")
        rig.clock.advance(to: sentAt + .seconds(30))
        try await waitUntil("the pairing timed out") { failed.withLock { $0 } != nil }
        #expect(failed.withLock { $0 as? HostError } == .pairingFailed(.timeout))
        _ = await pairing.value
        await rig.host.shutdown()
    }

    /// Repeated Attempts applies to the pairings the central starts (Part H, 2.3.6): after a
    /// failure, pair() is refused for the wait with a typed error and nothing is sent; a
    /// Security Request then gets Repeated Attempts; after the wait a pairing starts again.
    @Test func aCentralWaitsAfterAFailedPairing() async throws {
        let rig = try await CentralHostRig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        let first = Task { try await rig.host.pair(rig.connection) }
        #expect(try await nextFrame(rig).first == 0x01)
        try send(rig, handle: handle, [[0x05, 0x05]])
        await #expect(throws: HostError.pairingFailed(.peerFailed(.pairingNotSupported))) { try await first.value }

        await #expect(throws: HostError.pairingFailed(.repeatedAttempts(retryAfter: .seconds(2)))) { try await rig.host.pair(rig.connection) }
        try send(rig, handle: handle, [[0x0B, 0x09]])
        #expect(try await barrier(rig, handle: handle, identifier: 1) == [[0x05, 0x09]], "only Repeated Attempts went out")

        rig.clock.advance(by: .seconds(2))
        let again = Task { try await rig.host.pair(rig.connection) }
        #expect(try await nextFrame(rig).first == 0x01, "a Pairing Request once the wait is over")
        try send(rig, handle: handle, [[0x05, 0x05]])
        _ = try? await again.value
        await rig.host.shutdown()
    }

    /// A flood of Security Requests while the agent is asked about the first: the agent is
    /// asked once. An agent that never answers is a refusal after the Security Manager Timer;
    /// a request right after an answer is dropped until the rate limit allows another.
    @Test func securityRequestsAreOnePerLinkAndRateLimited() async throws {
        let rig = try await CentralHostRig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        let agent = CountingConsentAgent()
        await rig.host.setPairingAgent(agent)
        let request: [UInt8] = [0x0B, 0x09]
        // In rounds that fit the raw controller's ACL buffers.
        for round in 1...5 {
            try send(rig, handle: handle, Array(repeating: request, count: 3))
            #expect(try await barrier(rig, handle: handle, identifier: UInt8(10 + round)).isEmpty)
        }
        try await waitUntil("the agent was asked") { agent.asked == 1 }

        // Nobody answers: 30 s later the host refuses (Pairing Not Supported).
        rig.clock.advance(by: .seconds(30))
        #expect(try await nextFrame(rig) == [0x05, 0x05])
        #expect(agent.asked == 1)

        // The rate limit: one more now is taken (30 s since the last), the next at once is not.
        try send(rig, handle: handle, [request])
        try await waitUntil("the agent was asked again") { agent.asked == 2 }
        agent.answer(false)
        #expect(try await nextFrame(rig) == [0x05, 0x05])
        try send(rig, handle: handle, [request])
        #expect(try await barrier(rig, handle: handle, identifier: 2).isEmpty, "dropped within the interval")
        #expect(agent.asked == 2)
        rig.clock.advance(by: .seconds(1))
        try send(rig, handle: handle, [request])
        try await waitUntil("a request a second later is taken") { agent.asked == 3 }
        agent.answer(true)
        #expect(try await nextFrame(rig).first == 0x01, "accepted: the central pairs")
        await rig.host.shutdown()
    }
}

/// An agent whose consent waits until the test answers; counts the questions.
final class CountingConsentAgent: PairingAgent {
    private let state = Mutex<(asked: Int, waiting: [CheckedContinuation<Bool, Never>])>((0, []))

    var asked: Int { state.withLock { $0.asked } }

    /// Answers the newest question (an older one the host gave up on is answered too, late).
    func answer(_ accepted: Bool) {
        let waiters = state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiters { waiter.resume(returning: accepted) }
    }

    func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                state.asked += 1
                state.waiting.append(continuation)
            }
        }
    }
}
