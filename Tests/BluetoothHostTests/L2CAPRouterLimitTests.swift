import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import BluetoothTransport
import Logging
import Testing

/// The host actor's queue (``L2CAPRouter/hostItems``) is bounded: a peer flooding signalling
/// or SMP PDUs, or a controller flooding events, cannot make it grow without end, while the
/// events that bring links up and down always get through.
@Suite(.timeLimit(.minutes(1))) struct L2CAPRouterLimitTests {
    /// A transport that takes everything and delivers nothing: the router is driven directly.
    final class SilentTransport: HCITransport {
        let name = "silent"
        func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {}
        func send(_ packet: H4Packet) throws(TransportError) {}
        func close() {}
    }

    func makeRouter(peerItems: Int, allItems: Int) -> L2CAPRouter {
        let controller = HCIController(transport: SilentTransport())
        let server = GATTServer { _, _, _ in }
        return L2CAPRouter(controller: controller, server: server,
                           settings: .init(transactionTimeout: .seconds(30), clock: .continuous),
                           queueLimits: .init(peerItems: peerItems, allItems: allItems), logger: Logger(label: "test"))
    }

    func signaling(_ identifier: UInt8) -> HCIInbound {
        // An unknown signalling command: the host would answer Command Reject.
        .l2cap(connectionHandle: 0x0040, pdu: L2CAPBasicFrame.encode(channelID: .leSignaling, payload: [0x7F, identifier, 0, 0])[...])
    }

    func securityManager() -> HCIInbound {
        .l2cap(connectionHandle: 0x0040, pdu: L2CAPBasicFrame.encode(channelID: .securityManager, payload: [0x0B, 0x01])[...])
    }

    static let unknownEvent = HCIInbound.event(.unknown(code: 0xFE, parameters: [1]))
    static let disconnection = HCIInbound.event(.disconnectionComplete(DisconnectionCompleteEvent(
        status: .success, connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)))

    /// Everything yielded so far, with the stream ended by a closed transport.
    func drain(_ router: L2CAPRouter) async -> [L2CAPRouter.HostItem] {
        _ = router.process([.transportClosed(nil)])
        var all: [L2CAPRouter.HostItem] = []
        for await batch in router.hostItems { all += batch }
        return all
    }

    @Test func peerPDUsPastTheLimitAreDroppedUntilTheHostCatchesUp() async throws {
        let router = makeRouter(peerItems: 8, allItems: 100)
        _ = router.process((0..<6).map { signaling(UInt8($0)) })
        _ = router.process([securityManager(), securityManager(), securityManager(), securityManager()])
        #expect(router.droppedHostItemCount == 2)
        // Events still go in, up to their own limit.
        _ = router.process([Self.unknownEvent])
        #expect(router.droppedHostItemCount == 2)
        // The host handled what it had: the peer is heard again.
        router.didHandle(9)
        _ = router.process([signaling(99)])
        #expect(router.droppedHostItemCount == 2)
        let items = await drain(router)
        let peerItems = items.filter {
            switch $0 {
            case .signaling, .securityManager: return true
            default: return false
            }
        }
        #expect(peerItems.count == 9)
    }

    @Test func eventsPastTheLimitAreDroppedButLinksAlwaysComeAndGo() async throws {
        let router = makeRouter(peerItems: 2, allItems: 4)
        _ = router.process(Array(repeating: Self.unknownEvent, count: 6) + [Self.disconnection, signaling(1)])
        #expect(router.droppedHostItemCount == 3)
        let items = await drain(router)
        #expect(items.count == 6)
        let disconnections = items.filter {
            if case .event(.disconnectionComplete) = $0 { return true }
            return false
        }
        #expect(disconnections.count == 1)
        if case .transportClosed = items.last {} else { Issue.record("the stream's last item is the closed transport, got \(String(describing: items.last))") }
    }
}
