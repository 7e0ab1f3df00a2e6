import BluetoothCore
import BluetoothHCI
import BluetoothTransport
@testable import BluetoothVirtual
import Foundation
import Synchronization
import Testing

@Suite("Virtual controller: transport contract and HCI/TCP server", .timeLimit(.minutes(1)))
struct TransportAndServerTests {
    @Test func closeDeliversExactlyOneClosedAndSendThenThrows() async throws {
        let link = VirtualLink()
        let host = HCITestHost(link.addController(address: TestAddresses.central))
        #expect(try await host.complete(ResetCommand()).status == .success)
        host.close()
        host.close()
        let closed = try await host.next("closed") { if case .closed = $0 { return true }; return false }
        if case let .closed(reason) = closed.item { #expect(reason == nil) }
        #expect(throws: TransportError.self) { try host.sendRaw(ResetCommand().encode()) }
        #expect(try await host.expectNothing("a second closed", for: .milliseconds(100)) { if case .closed = $0 { return true }; return false })
    }

    @Test func aNewHostReplacesTheOldOne() async throws {
        let link = VirtualLink()
        let controller = link.addController(address: TestAddresses.central)
        let first = HCITestHost(controller)
        let second = HCITestHost(controller)
        let closed = try await first.next("closed") { if case .closed = $0 { return true }; return false }
        if case let .closed(reason) = closed.item { #expect(reason != nil, "replaced, not closed by its host") }
        #expect(try await second.complete(ResetCommand()).status == .success)
    }

    @Test func packetsBeforeStartAreKeptAndTheReceiverIsNeverCalledFromSend() async throws {
        let link = VirtualLink()
        let transport = link.addController(address: TestAddresses.central).makeTransport()
        let sendingThread = Mutex<pthread_t?>(nil)
        let calledFromSend = Mutex(false)
        try transport.send(H4Packet(.command, ResetCommand().encode()))
        let inbox = TestInbox<H4Packet>(now: { link.now })
        transport.start { event in
            if let sender = sendingThread.withLock({ $0 }), pthread_equal(sender, pthread_self()) != 0 {
                calledFromSend.withLock { $0 = true }
            }
            if case let .packets(packets) = event { packets.forEach(inbox.append) }
        }
        _ = try await inbox.next("Command Complete of the early Reset")
        for _ in 0..<20 {
            sendingThread.withLock { $0 = pthread_self() }
            try transport.send(H4Packet(.command, LERandCommand().encode()))
            sendingThread.withLock { $0 = nil }
        }
        for _ in 0..<20 { _ = try await inbox.next("LE Rand Command Complete") }
        #expect(!calledFromSend.withLock { $0 })
        transport.close()
    }

    @Test("A closed transport lets go of its receiver, which holds the transport's owner (no cycle, no leak)")
    func closedTransportReleasesItsReceiver() async throws {
        let link = VirtualLink()
        let transport = link.addController(address: TestAddresses.central).makeTransport()
        weak var weakOwner: TransportOwner?
        let closed = Mutex(false)
        do {
            // As the HCI layer does: the owner holds the transport, the receiver holds the owner.
            let owner = TransportOwner(transport)
            weakOwner = owner
            transport.start { event in
                _ = owner
                if case .closed = event { closed.withLock { $0 = true } }
            }
            try transport.send(H4Packet(.command, ResetCommand().encode()))
        }
        transport.close()
        transport.waitUntilDelivered()
        #expect(closed.withLock { $0 })
        #expect(weakOwner == nil, "the transport still holds its receiver, and through it its owner")
    }

    @Test("A transport closed before it starts gives the receiver its closed and does not keep it")
    func transportClosedBeforeStartDoesNotKeepItsReceiver() async throws {
        let link = VirtualLink()
        let transport = link.addController(address: TestAddresses.central).makeTransport()
        weak var weakOwner: TransportOwner?
        let closed = Mutex(false)
        transport.close()
        do {
            let owner = TransportOwner(transport)
            weakOwner = owner
            transport.start { event in
                _ = owner
                if case .closed = event { closed.withLock { $0 = true } }
            }
        }
        transport.waitUntilDelivered()
        #expect(closed.withLock { $0 })
        #expect(weakOwner == nil)
    }

    @Test func serverSpeaksH4OverTCP() async throws {
        let link = VirtualLink()
        let controller = link.addController(address: TestAddresses.central)
        let server = VirtualControllerServer(controller: controller)
        let port = try server.start()
        defer { server.stop() }
        #expect(port != 0)
        #expect(server.transportSpecification == "tcp:127.0.0.1:\(port)")
        #expect(server.bumbleTransport == "tcp-client:127.0.0.1:\(port)")

        // Our own HCI layer over the socket: the full initialization.
        let tcp = try TCPTransport.connect(host: "127.0.0.1", port: port)
        let hci = HCIController(transport: tcp)
        hci.start()
        let info = try await hci.initialize()
        #expect(info.address == TestAddresses.central)
        #expect(server.hasClient)

        // A second client is turned away while the first is connected.
        let intruder = HCITestHost(controller, transport: try TCPTransport.connect(host: "127.0.0.1", port: port))
        _ = try await intruder.next("closed second client") { if case .closed = $0 { return true }; return false }

        // The first client starts advertising, then leaves: the controller is reset.
        _ = try await hci.send(LESetAdvertisingEnableCommand(enable: true))
        #expect(controller.isAdvertising)
        hci.close()
        try await waitUntil("the server noticed the client left") { !server.hasClient }
        // The reset runs on the link's queue, just after the server lets the client go.
        try await waitUntil("the controller was reset") { !controller.isAdvertising }
        #expect(server.clientsServed == 1)

        // And a new client is welcome.
        let again = HCITestHost(controller, transport: try TCPTransport.connect(host: "127.0.0.1", port: port))
        #expect(try await again.complete(ResetCommand()).status == .success)
        again.close()
    }

    @Test func serverStopDisconnectsTheClient() async throws {
        let link = VirtualLink()
        let controller = link.addController(address: TestAddresses.central)
        let server = VirtualControllerServer(controller: controller)
        let port = try server.start()
        let client = HCITestHost(controller, transport: try TCPTransport.connect(host: "127.0.0.1", port: port))
        #expect(try await client.complete(ResetCommand()).status == .success)
        server.stop()
        server.stop()
        _ = try await client.next("closed") { if case .closed = $0 { return true }; return false }
        #expect(throws: TransportError.self) { _ = try TCPTransport.connect(host: "127.0.0.1", port: port, timeout: .seconds(1)) }
    }

    @Test func serverRefusesABadAddress() {
        let link = VirtualLink()
        let server = VirtualControllerServer(controller: link.addController(address: TestAddresses.central), host: "not-an-address")
        #expect(throws: TransportError.self) { try server.start() }
    }
}

/// Stands for the HCI layer: it holds its transport, whose receiver holds it.
private final class TransportOwner: Sendable {
    let transport: VirtualControllerTransport

    init(_ transport: VirtualControllerTransport) {
        self.transport = transport
    }
}

