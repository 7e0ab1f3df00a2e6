import BluetoothCore
import BluetoothHCI
import Logging
import Synchronization

/// What L2CAP keeps for one LE link: its ATT bearer (the one ATT endpoint of the link, for
/// both roles) and its credit-based channels, with the channel requests awaiting an answer and
/// the CIDs held for a Disconnection Response.
///
/// One object per link, not per handle. The router makes it at LE Connection Complete on the
/// transport's reader thread, before the host actor hears of the link, and closes it at
/// Disconnection Complete (or the transport's loss) before anything later is routed. The
/// host's ``Connection`` holds the same object, so nothing the host does for a link that has
/// ended (a late channel request, a cancelled open settling, a CID released by its timer)
/// reaches a later link that reuses the handle: a closed link refuses new channels and
/// requests, and forgets the old ones.
final class L2CAPLink: Sendable {
    /// A channel request this host sent, waiting for its response.
    struct PendingOpen: Sendable {
        var channels: [L2CAPChannel]
        /// Gets the response (an LE or an enhanced credit-based connection response), or why none came.
        var complete: @Sendable (Result<LESignalingCommand, L2CAPChannelError>) -> Void
        /// Whether its task was cancelled (``L2CAPLink/cancelPendingOpen(identifier:late:)``).
        var isCancelled = false
    }

    private struct Channels {
        var byLocalCID: [L2CAPChannelID: L2CAPChannel] = [:]
        var pendingOpens: [UInt8: PendingOpen] = [:]
        /// The timers releasing closed channels whose Disconnection Response has not come.
        var releaseTimers: [L2CAPChannelID: Task<Void, Never>] = [:]
        /// Why the link ended, once it has: every channel call fails with it from then on.
        var closedWith: L2CAPChannelError?
    }

    typealias Transmit = @Sendable (_ payload: [UInt8], _ channel: L2CAPChannelID, _ completion: HCIController.ACLCompletion?) -> Void

    let connectionHandle: UInt16
    /// The link's ATT endpoint: the client's transactions, the server's requests, the MTU and
    /// the link's security.
    let bearer: ATTBearer
    private let channels = Mutex(Channels())
    /// Builds a B-frame and hands it to the controller (the router's).
    private let transmit: Transmit

    init(bearer: ATTBearer, transmit: @escaping Transmit) {
        connectionHandle = bearer.connectionHandle
        self.bearer = bearer
        self.transmit = transmit
    }

    /// A link closed from the start, carrying nothing (for a connection the router made no link for).
    static func closed(connectionHandle: UInt16, peer: DeviceAddress, error: HostError, logger: Logger) -> L2CAPLink {
        let link = L2CAPLink(bearer: ATTBearer(connectionHandle: connectionHandle, peer: peer, logger: logger, send: { _, _ in }),
                             transmit: { _, _, _ in })
        link.close(with: error)
        return link
    }

    /// Sends `payload` on one of the link's channels (signalling, the Security Manager, a
    /// credit-based channel's K-frames; ATT goes through ``bearer``, which does the same).
    /// Nothing goes out once the link has ended, and `completion` hears so: HCI names a link
    /// only by its handle, which the next link may hold already.
    func send(_ payload: [UInt8], channel: L2CAPChannelID, completion: HCIController.ACLCompletion? = nil) {
        guard !isClosed else {
            completion?(.failure(.connectionClosed(connectionHandle: connectionHandle)))
            return
        }
        transmit(payload, channel, completion)
    }

    /// Sends one command on the LE signalling channel.
    func sendSignaling(_ command: LESignalingCommand, identifier: UInt8) {
        send(LESignalingPacket(identifier: identifier, command: command).encode(), channel: .leSignaling)
    }

    var isClosed: Bool { channels.withLock { $0.closedWith != nil } }

    /// Ends the link: its bearer fails what waits on it with `error`, every channel finishes,
    /// every open waiting for an answer fails, and release timers stop. Only the first call counts.
    func close(with error: HostError) {
        let channelError = Self.channelError(for: error)
        let (open, opens, timers) = channels.withLock { state -> ([L2CAPChannel], [PendingOpen], [Task<Void, Never>]) in
            guard state.closedWith == nil else { return ([], [], []) }
            defer { state = Channels(closedWith: channelError) }
            return (Array(state.byLocalCID.values), Array(state.pendingOpens.values), Array(state.releaseTimers.values))
        }
        bearer.close(with: error)
        timers.forEach { $0.cancel() }
        open.forEach { $0.finish(with: channelError) }
        opens.forEach { $0.complete(.failure(channelError)) }
    }

    private static func channelError(for error: HostError) -> L2CAPChannelError {
        switch error {
        case let .disconnected(reason): .disconnected(reason: reason)
        case .transportClosed: .transportClosed
        default: .host(error)
        }
    }

    // MARK: Channels

    func channel(localCID: L2CAPChannelID) -> L2CAPChannel? {
        channels.withLock { $0.byLocalCID[localCID] }
    }

    func channel(remoteCID: L2CAPChannelID) -> L2CAPChannel? {
        channels.withLock { $0.byLocalCID.values.first { $0.remoteCID == remoteCID } }
    }

    /// Every channel holding a CID on the link (open, opening, or closing).
    var allChannels: [L2CAPChannel] {
        channels.withLock { Array($0.byLocalCID.values) }
    }

    /// Reserves a free CID in 0x0040…0x007F (Vol 3, Part A, 2.1) and registers the channel
    /// `make` builds with it. Throws ``L2CAPChannelError/noResources`` when all 64 are in use,
    /// and why the link ended once it has.
    func allocate(_ make: (L2CAPChannelID) -> L2CAPChannel) throws(L2CAPChannelError) -> L2CAPChannel {
        let result = channels.withLock { state -> Result<L2CAPChannel, L2CAPChannelError> in
            if let error = state.closedWith { return .failure(error) }
            guard let raw = L2CAPChannelID.leDynamicRange.first(where: { state.byLocalCID[L2CAPChannelID(rawValue: $0)] == nil }) else {
                return .failure(.noResources)
            }
            let channel = make(L2CAPChannelID(rawValue: raw))
            state.byLocalCID[channel.localCID] = channel
            return .success(channel)
        }
        return try result.get()
    }

    /// Releases the channel's CID (if it still holds it); returns whether it did.
    @discardableResult
    func remove(_ channel: L2CAPChannel) -> Bool {
        let (removed, timer) = channels.withLock { state -> (Bool, Task<Void, Never>?) in
            guard state.byLocalCID[channel.localCID] === channel else { return (false, nil) }
            state.byLocalCID[channel.localCID] = nil
            return (true, state.releaseTimers.removeValue(forKey: channel.localCID))
        }
        timer?.cancel()
        return removed
    }

    /// Starts `timer`, which releases the closed `channel` if its Disconnection Response does
    /// not come first (``remove(_:)`` cancels it); cancelled at once when the channel no
    /// longer holds its CID.
    func setReleaseTimer(_ timer: Task<Void, Never>, for channel: L2CAPChannel) {
        let replaced = channels.withLock { state -> Task<Void, Never>? in
            guard state.byLocalCID[channel.localCID] === channel else { return timer }
            defer { state.releaseTimers[channel.localCID] = timer }
            return state.releaseTimers[channel.localCID]
        }
        replaced?.cancel()
    }

    // MARK: Opens

    /// Registers a request waiting for its answer; on a link that has ended, `open` fails at once.
    func addPendingOpen(_ open: PendingOpen, identifier: UInt8) {
        let closed = channels.withLock { state -> L2CAPChannelError? in
            if let error = state.closedWith { return error }
            state.pendingOpens[identifier] = open
            return nil
        }
        if let closed { open.complete(.failure(closed)) }
    }

    func takePendingOpen(identifier: UInt8) -> PendingOpen? {
        channels.withLock { $0.pendingOpens.removeValue(forKey: identifier) }
    }

    /// The task waiting for the answer to `identifier` was cancelled: the open fails with
    /// ``L2CAPChannelError/cancelled`` now, and `late` gets what ends the request later (the
    /// peer's response, the RTX timeout or the link's end) in its place.
    /// Once only: the task's cancellation handler and its own check after sending may both
    /// call it, and a second call would hand `late` the cancellation as the request's end,
    /// releasing the CIDs of a request still on its way (Core 6.0, Vol 3, Part A, 6.2.1).
    func cancelPendingOpen(identifier: UInt8, late: @escaping @Sendable (Result<LESignalingCommand, L2CAPChannelError>) -> Void) {
        let open = channels.withLock { state -> PendingOpen? in
            guard let open = state.pendingOpens[identifier], !open.isCancelled else { return nil }
            state.pendingOpens[identifier] = PendingOpen(channels: open.channels, complete: late, isCancelled: true)
            return open
        }
        open?.complete(.failure(.cancelled))
    }
}
