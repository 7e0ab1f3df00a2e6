@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Testing

@Suite("RemotePeripheral's Service Changed stream", .timeLimit(.minutes(2)))
struct ServiceChangeBufferTests {
    @Test("A peripheral that indicates Service Changed again and again fills the unread stream up to its limit, no further")
    func unreadStreamIsBounded() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Changer", address: "D0:00:00:00:00:20")
        let controller = link.addController(name: "central", address: try #require(BluetoothAddress("C0:00:00:00:00:20")))
        // The operation limit is a hang guard here: connect enables Service Changed indications
        // within it, and gives up (logged) past it; 5 s was passed in a loaded run, and the
        // first indication then found no subscription.
        let central = try await BluejayCentral.open(.transport(controller.makeTransport()), operationTimeout: .seconds(30))
        let remote = try await central.connect(peripheral.identifier, timeout: .seconds(10))
        let limit = RemotePeripheral.serviceChangeBufferLimit
        let changes = limit + 20
        let connection = try #require(await peripheral.host.connections.first)
        let server = await peripheral.host.server
        #expect(await server.subscriptions(forHandle: server.serviceChangedHandle).count == 1, "connect returned with indications on")
        // Each indication waits for the central's confirmation before the next.
        for _ in 0..<changes {
            try await server.indicate([0x01, 0x00, 0xFF, 0xFF], forHandle: server.serviceChangedHandle, connectionHandle: connection.handle)
        }
        #expect(await eventually(timeout: .seconds(30)) { remote.droppedServiceChangeCount == changes - limit },
                "dropped: \(remote.droppedServiceChangeCount)")
        try await remote.disconnect()
        var held = 0
        for await _ in remote.serviceChanges { held += 1 }
        #expect(held == limit, "the newest \(limit) reports, then the end")
        await central.shutdown()
        await peripheral.shutdown()
    }
}
