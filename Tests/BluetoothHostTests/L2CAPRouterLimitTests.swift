import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import BluetoothTransport
import Logging
import Synchronization
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

    func signaling(_ identifier: UInt8, handle: UInt16 = 0x0040) -> HCIInbound {
        // An unknown signalling command: the host would answer Command Reject.
        .l2cap(connectionHandle: handle, pdu: L2CAPBasicFrame.encode(channelID: .leSignaling, payload: [0x7F, identifier, 0, 0])[...])
    }

    func securityManager(handle: UInt16 = 0x0040) -> HCIInbound {
        .l2cap(connectionHandle: handle, pdu: L2CAPBasicFrame.encode(channelID: .securityManager, payload: [0x0B, 0x01])[...])
    }

    /// The peer items of `items` on `handle`.
    func peerItems(_ items: [L2CAPRouter.HostItem], handle: UInt16) -> [L2CAPRouter.HostItem] {
        items.filter {
            switch $0 {
            case let .signaling(itemHandle, _), let .securityManager(itemHandle, _): return itemHandle == handle
            default: return false
            }
        }
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
        router.didHandle(Array(repeating: .signaling(connectionHandle: 0x0040, payload: []), count: 8) + [.event(.unknown(code: 0xFE, parameters: [1]))])
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
        // Two events dropped; the peer's PDU has a bound of its own, which events do not fill.
        #expect(router.droppedHostItemCount == 2)
        let items = await drain(router)
        #expect(items.count == 7)
        #expect(peerItems(items, handle: 0x0040).count == 1)
        let disconnections = items.filter {
            if case .event(.disconnectionComplete) = $0 { return true }
            return false
        }
        #expect(disconnections.count == 1)
        if case .transportClosed = items.last {} else { Issue.record("the stream's last item is the closed transport, got \(String(describing: items.last))") }
    }

    /// One peer floods signalling while the host is busy: its own PDUs past the bound are
    /// dropped, but another link's credits, pairing steps and disconnection answers, and the
    /// controller's events, all get through.
    @Test func aFloodingLinkDoesNotStarveAnother() async throws {
        let router = makeRouter(peerItems: 8, allItems: 16)
        _ = router.process((0..<50).map { signaling(UInt8($0)) })
        #expect(router.droppedHostItemCount == 42)
        // In one batch, interleaved with more of the flood: the second link's PDUs, an event.
        _ = router.process([signaling(60), securityManager(handle: 0x0041), signaling(61), signaling(1, handle: 0x0041),
                            Self.unknownEvent, securityManager(handle: 0x0041)])
        #expect(router.droppedHostItemCount == 44)
        // The flood goes on after the host handled part of it: the flooder gets only its share.
        router.didHandle(Array(repeating: .signaling(connectionHandle: 0x0040, payload: []), count: 4))
        _ = router.process((70..<80).map { signaling(UInt8($0)) } + [signaling(2, handle: 0x0041)])
        let items = await drain(router)
        #expect(peerItems(items, handle: 0x0041).count == 4, "every PDU of the second link")
        #expect(peerItems(items, handle: 0x0040).count == 12, "8, then 4 more once the host took 4")
        #expect(items.contains { if case .event(.unknown) = $0 { return true } else { return false } })
    }

    /// A barrier comes after what was yielded before it, so the host actor has handled those
    /// items when it is resumed; it is never dropped, and once the stream ended it returns at once.
    @Test func aBarrierFollowsWhatCameBeforeIt() async throws {
        let router = makeRouter(peerItems: 8, allItems: 1)
        _ = router.process([Self.unknownEvent])
        _ = router.process([Self.unknownEvent])  // past the event limit: dropped
        let handled = Mutex(0)
        let barrier = Task { () -> Int in
            await router.barrier()
            return handled.withLock { $0 }
        }
        var batches = router.hostItems.makeAsyncIterator()
        let first = await batches.next()
        #expect(first?.count == 1)
        handled.withLock { $0 += 1 }
        let second = await batches.next()
        guard case let .barrier(continuation)? = second?.first else {
            Issue.record("expected the barrier, got \(String(describing: second))")
            return
        }
        continuation.resume()
        #expect(await barrier.value == 1, "resumed once the host handled the items before it")
        _ = router.process([.transportClosed(nil)])
        _ = await batches.next()
        try await withTimeout { await router.barrier() }
    }
}
