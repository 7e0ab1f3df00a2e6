import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Logging
import Synchronization
import Testing

/// A link's L2CAP state (its bearer and channels) is one object per link, not per handle: what
/// the host still does for a link that ended never reaches the next link on the same handle.
/// Controllers reuse a handle at once (Bumble's gives the next link the lowest free handle).
@Suite(.timeLimit(.minutes(1))) struct L2CAPLinkTests {
    static let handle: UInt16 = 0x0040

    static func connectionComplete(peer: UInt64) -> HCIInbound {
        .event(.le(.connectionComplete(LEConnectionCompleteEvent(
            connectionHandle: handle, role: .central, peerAddressType: .random, peerAddress: BluetoothAddress(rawValue: peer),
            connectionInterval: 0x18, peripheralLatency: 0, supervisionTimeout: 0x48))))
    }

    static let disconnection = HCIInbound.event(.disconnectionComplete(DisconnectionCompleteEvent(
        status: .success, connectionHandle: handle, reason: .remoteUserTerminatedConnection)))

    /// A router driven directly, as the queue-limit tests drive it, with the host's limits.
    func makeRouter() -> L2CAPRouter {
        L2CAPRouterLimitTests().makeRouter(peerItems: 256, allItems: 4096)
    }

    func makeChannel(on link: L2CAPLink, cid: L2CAPChannelID) -> L2CAPChannel {
        L2CAPChannel(psm: 0x0080, connectionHandle: link.connectionHandle, peer: link.bearer.peer, localCID: cid,
                     parameters: L2CAPChannelParameters(), io: .init(sendFrame: { _, _, _ in }, sendSignaling: { _ in }))
    }

    /// Two links on one handle, the first ended by the controller: (first, second).
    func reusedHandle(_ router: L2CAPRouter) throws -> (L2CAPLink, L2CAPLink) {
        _ = router.process([Self.connectionComplete(peer: 0xC0FF_EE00_0001)])
        let first = try #require(router.link(for: Self.handle))
        _ = router.process([Self.disconnection, Self.connectionComplete(peer: 0xC0FF_EE00_0002)])
        let second = try #require(router.link(for: Self.handle))
        #expect(first !== second)
        return (first, second)
    }

    @Test func theHostActorGetsTheLinkMadeForItsEventNotTheOneOnTheHandleNow() async throws {
        let router = makeRouter()
        let (first, second) = try reusedHandle(router)
        _ = router.process([.transportClosed(nil)])
        var links: [L2CAPLink] = []
        for await batch in router.hostItems {
            for case let .connected(completion) in batch { links += [try #require(completion.link)] }
        }
        #expect(links.count == 2)
        #expect(links.first === first && links.last === second)
    }

    @Test func anEndedLinkRefusesChannelsAndRequestsAndLeavesTheNextLinkAlone() async throws {
        let router = makeRouter()
        let (first, second) = try reusedHandle(router)
        #expect(first.isClosed && first.bearer.closedError == .disconnected(reason: .remoteUserTerminatedConnection))
        #expect(!second.isClosed && second.bearer.closedError == nil)

        // A channel request the host makes late for the first link: refused with why it ended,
        // and no CID taken on the second.
        #expect(throws: L2CAPChannelError.disconnected(reason: .remoteUserTerminatedConnection)) {
            try first.allocate { makeChannel(on: first, cid: $0) }
        }
        let failed = await withCheckedContinuation { (continuation: CheckedContinuation<L2CAPChannelError?, Never>) in
            first.addPendingOpen(.init(channels: [], complete: { outcome in
                if case let .failure(error) = outcome { continuation.resume(returning: error) } else { continuation.resume(returning: nil) }
            }), identifier: 7)
        }
        #expect(failed == .disconnected(reason: .remoteUserTerminatedConnection))
        #expect(second.takePendingOpen(identifier: 7) == nil)

        // The second link's channel is its own: the host giving up on the first link (a
        // controller reset, a disconnection never reported) ends nothing of the second.
        let channel = try second.allocate { makeChannel(on: second, cid: $0) }
        router.linkEnded(first, error: .disconnected(reason: .connectionTimeout))
        #expect(router.link(for: Self.handle) === second)
        #expect(!second.isClosed)
        #expect(second.channel(localCID: channel.localCID) === channel)

        // Giving up on the second link closes it and takes it out of the table.
        router.linkEnded(second, error: .disconnected(reason: .connectionTimeout))
        #expect(router.link(for: Self.handle) == nil)
        #expect(second.isClosed && second.channel(localCID: channel.localCID) == nil)
        #expect(second.bearer.closedError == .disconnected(reason: .connectionTimeout))
    }

    /// A cancelled open's task may cancel it twice (its cancellation handler, and its own check
    /// once the request is sent, when the cancellation came in between): the second must not
    /// end the request, whose CIDs stay held until the peer answers or the RTX bound passes.
    @Test func aPendingOpenIsCancelledOnceAndKeepsWaitingForItsEnd() throws {
        let router = makeRouter()
        _ = router.process([Self.connectionComplete(peer: 0xC0FF_EE00_0001)])
        let link = try #require(router.link(for: Self.handle))
        let outcomes = Collected<String>()
        link.addPendingOpen(.init(channels: [], complete: { outcomes.append("caller: \($0)") }), identifier: 9)
        let late: @Sendable (Result<LESignalingCommand, L2CAPChannelError>) -> Void = { outcomes.append("late: \($0)") }
        link.cancelPendingOpen(identifier: 9, late: late)
        link.cancelPendingOpen(identifier: 9, late: late)
        #expect(outcomes.all == ["caller: \(Result<LESignalingCommand, L2CAPChannelError>.failure(.cancelled))"])
        // The request's real end still reaches `late`, once.
        link.takePendingOpen(identifier: 9)?.complete(.failure(.timeout))
        #expect(outcomes.all.count == 2)
        #expect(outcomes.all.last == "late: \(Result<LESignalingCommand, L2CAPChannelError>.failure(.timeout))")
    }

    @Test func closingFailsEveryOpenAndChannelOnceAndStopsReleaseTimers() async throws {
        let router = makeRouter()
        _ = router.process([Self.connectionComplete(peer: 0xC0FF_EE00_0001)])
        let link = try #require(router.link(for: Self.handle))
        let channel = try link.allocate { makeChannel(on: link, cid: $0) }
        let timer = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
        link.setReleaseTimer(timer, for: channel)
        let outcome = Mutex<Result<LESignalingCommand, L2CAPChannelError>?>(nil)
        link.addPendingOpen(.init(channels: [channel], complete: { result in outcome.withLock { $0 = result } }), identifier: 3)
        #expect(outcome.withLock { $0 } == nil)
        _ = router.process([.transportClosed(nil)])
        #expect(outcome.withLock { $0 } == .failure(.transportClosed))
        #expect(channel.isOpen == false)
        await timer.value
        #expect(timer.isCancelled)
        #expect(link.allChannels.isEmpty)
        // A second close changes nothing (the first error stays).
        link.close(with: .disconnected(reason: .connectionTimeout))
        #expect(link.bearer.closedError == .transportClosed(nil))
    }

    @Test func anEndedLinkSendsNothingAndSaysSo() throws {
        let sent = Mutex<[(L2CAPChannelID, [UInt8])]>([])
        let bearer = ATTBearer(connectionHandle: Self.handle, peer: DeviceAddress(BluetoothAddress(rawValue: 0xC0FF_EE00_0001), type: .random),
                               logger: Logger(label: "test"), send: { _, _ in })
        let link = L2CAPLink(bearer: bearer, transmit: { payload, channel, _ in sent.withLock { $0.append((channel, payload)) } })
        link.sendSignaling(.commandReject(.commandNotUnderstood), identifier: 1)
        #expect(sent.withLock { $0.map(\.0) } == [.leSignaling])

        link.close(with: .disconnected(reason: .remoteUserTerminatedConnection))
        let outcome = Mutex<Result<Void, HCIError>?>(nil)
        link.send([0x0B, 0x01], channel: .securityManager) { result in outcome.withLock { $0 = result } }
        link.sendSignaling(.commandReject(.commandNotUnderstood), identifier: 2)
        #expect(sent.withLock { $0.count } == 1, "nothing after the link's end: its handle may be the next link's")
        guard case .failure(.connectionClosed(Self.handle))? = outcome.withLock({ $0 }) else {
            Issue.record("the completion did not hear the link had ended")
            return
        }
    }
}
