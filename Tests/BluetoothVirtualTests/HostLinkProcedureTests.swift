import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
@testable import BluetoothVirtual
import Synchronization
import Testing

/// Link procedures whose end the controller or the peer may never report: every wait of the
/// host is bounded (on simulated time) and cancellable.
@Suite("Host: bounded link procedures", .timeLimit(.minutes(1)))
struct HostLinkProcedureTests {
    @Test func aDisconnectionTheControllerNeverReportsEndsAfterTheSupervisionTimeout() async throws {
        // 1 s supervision timeout; the controller's Disconnection Complete is lost.
        let rig = try await CentralHostRig.make(supervisionTimeout: 100)
        rig.filter.dropIncoming { if case .disconnectionComplete = $0 { return true }; return false }
        let events = await rig.host.events()
        let start = rig.clock.now
        let disconnecting = Task { [connection = rig.connection] in try await connection.disconnect() }
        let limit = Duration.seconds(1) + .seconds(2)
        try await rig.waitForTimer(at: start + limit)
        rig.clock.advance(to: start + limit - .milliseconds(1))
        #expect(rig.connection.isConnected, "not given up before the supervision timeout and its margin")
        rig.clock.advance(to: start + limit)
        try await disconnecting.value
        #expect(rig.connection.disconnectReason == .connectionTimeout)
        #expect(try await rig.connection.waitForDisconnection() == .connectionTimeout)
        for await event in events {
            if case let .disconnected(connection, reason) = event {
                #expect(connection === rig.connection)
                #expect(reason == .connectionTimeout)
                break
            }
        }
        // The handle is forgotten: requests on it fail at once instead of waiting.
        await #expect(throws: HostError.self) { _ = try await rig.connection.readRSSI() }
        await rig.host.shutdown()
    }

    @Test func aParameterUpdateThatNeverCompletesTimesOut() async throws {
        let rig = try await CentralHostRig.make()
        rig.filter.dropIncoming { if case .le(.connectionUpdateComplete) = $0 { return true }; return false }
        let start = rig.clock.now
        let update = Task { [connection = rig.connection] in
            try await connection.updateParameters(intervalRange: 24...24, peripheralLatency: 0, supervisionTimeout: 200)
        }
        try await rig.waitForTimer(at: start + .seconds(40))
        rig.clock.advance(to: start + .seconds(40))
        await #expect(throws: HostError.procedureTimeout("the connection parameter update")) { _ = try await update.value }
        #expect(rig.connection.isConnected, "a late procedure fails the caller, not the link")
        await rig.host.shutdown()
    }

    @Test func cancellingAWaitEndsItAndNotTheLink() async throws {
        let rig = try await CentralHostRig.make()
        rig.filter.dropIncoming { if case .le(.connectionUpdateComplete) = $0 { return true }; return false }
        let update = Task { [connection = rig.connection] in
            try await connection.updateParameters(intervalRange: 24...24, peripheralLatency: 0, supervisionTimeout: 200)
        }
        try await waitUntil("the update command went out") { rig.filter.sentCommands.contains(LEConnectionUpdateCommand.opcode) }
        update.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await update.value }

        let waiting = Task { [connection = rig.connection] in try await connection.waitForDisconnection() }
        waiting.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await waiting.value }
        #expect(rig.connection.isConnected)
        await rig.host.shutdown()
    }

    @Test func aPeripheralFloodingParameterRequestsGetsOneUpdateAtATimeAndItsNewest() async throws {
        let rig = try await CentralHostRig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        // Six requests in a row (within the controller's eight ACL buffers), each for a different
        // interval: the central accepts each, runs one update at a time and, after it, only the
        // newest that waited.
        let intervals: [UInt16] = (0..<6).map { 16 + 2 * $0 }
        for (index, interval) in intervals.enumerated() {
            let request = L2CAPConnectionParameterUpdateRequest(intervalMin: interval, intervalMax: interval, peripheralLatency: 0,
                                                                timeoutMultiplier: 300)
            let packet = LESignalingPacket(identifier: UInt8(index + 1), command: .connectionParameterUpdateRequest(request))
            try rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(channelID: .leSignaling, payload: packet.encode()))
        }
        let newest = intervals[intervals.count - 1]
        try await waitUntil("the newest interval applies", timeout: .seconds(20)) { rig.connection.parameters.interval == newest }
        let traffic = rig.filter.traffic
        var inFlight = 0, mostInFlight = 0, updates = 0
        for entry in traffic {
            switch entry {
            case .sent(LEConnectionUpdateCommand.opcode): inFlight += 1; updates += 1
            case .received(.le(.connectionUpdateComplete)): inFlight -= 1
            default: break
            }
            mostInFlight = max(mostInFlight, inFlight)
        }
        #expect(mostInFlight == 1, "one update at a time")
        #expect(updates < intervals.count, "\(updates) updates for \(intervals.count) requests: waiting ones are replaced by newer")
        await rig.host.shutdown()
    }
}
