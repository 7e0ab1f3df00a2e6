import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// The LE Connection Complete of an attempt can be handled by the host before the caller of
/// `connect` has come back from LE Create Connection's Command Status, when the host's event
/// loop runs first on a loaded machine. The link is
/// the caller's all the same (before the fix the caller got `cancelled`, and the link stayed up
/// with no owner: `bluejay listen` failed so once in a loaded run).
@Suite("Host: a connection completed before its caller resumed", .timeLimit(.minutes(1)))
struct ConnectionAnswerRaceTests {
    @Test("LE Connection Complete handled before LE Create Connection's Command Status reached its caller: the caller gets the link")
    func completionBeforeTheCommandStatus() async throws {
        let rig = try await CentralHostRig.unconnected()
        let (filter, host, peripheral) = (rig.filter, rig.host, rig.peripheral)

        // The host's event loop can handle the LE Connection Complete before the caller's task
        // is back from the Command Status (it needs one more hop through the global executor):
        // here the Command Status is simply held until the host has handled the completion.
        let createOpcodes: Set<HCIOpcode> = [LECreateConnectionCommand.opcode, LEExtendedCreateConnectionCommand.opcode]
        filter.holdIncoming { event in
            if case let .commandStatus(status) = event { return createOpcodes.contains(status.opcode) }
            return false
        }
        let attempt = Task { try await host.connect(to: peripheral.publicAddress, timeout: .seconds(20)) }
        try await waitUntil("the host handled the LE Connection Complete") { await !host.connections.isEmpty }
        #expect(filter.held.count == 1, "the Command Status still held")
        filter.releaseHeld()
        let connection = try await attempt.value
        #expect(connection.isConnected)
        #expect(await host.isConnecting == false)
        // The next attempt is not disturbed by the earlier one's answer.
        try await connection.disconnect()
        try await peripheral.advertise()
        let again = try await host.connect(to: peripheral.publicAddress, timeout: .seconds(20))
        #expect(again.isConnected)
        await host.shutdown()
    }
}
