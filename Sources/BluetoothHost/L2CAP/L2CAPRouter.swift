import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import Logging
import Synchronization

/// L2CAP on the LE links of one host (Core 6.0, Vol 3, Part A): takes each batch the
/// ``HCIController`` hands over on the transport's reader thread and routes it at once, by
/// connection handle and channel ID. ATT goes to the link's ``ATTBearer`` in place (no copy,
/// no task switch), K-frames to the link's channel; advertising reports go to the running
/// scan's ``ScanReceiver`` the same way; LE signalling, the Security Manager and the other
/// events go to the host actor as one element per batch. It is also the one place B-frames
/// are built.
///
/// The table of links (``L2CAPLink``: a link's bearer and channels) follows the controller's
/// own order: a link exists from the LE Connection Complete event on, before the host actor
/// hears of it (the event reaches the actor with the link, ``HostItem/connected(_:)``), so no
/// PDU that follows the event can miss it; it closes at Disconnection Complete, failing what
/// waits on it, before anything later is routed. Encryption Change sets the bearer's security
/// the same way, before the PDUs after it.
final class L2CAPRouter: Sendable {
    /// What the host actor handles: the control plane.
    enum HostItem: Sendable {
        case event(HCIEvent)
        /// A successful LE connection complete event, with the link the router opened for it.
        case connected(ConnectionCompletion)
        case signaling(connectionHandle: UInt16, payload: [UInt8])
        case securityManager(connectionHandle: UInt16, payload: [UInt8])
        /// A bearer's transaction timed out: its link must be dropped.
        case attTransactionTimeout(ATTBearer)
        case transportClosed(TransportError?)
        /// Resumed by the host actor once it has handled every item before it
        /// (``L2CAPRouter/barrier()``).
        case barrier(CheckedContinuation<Void, Never>)
    }

    /// What a new bearer needs besides its link.
    struct BearerSettings: Sendable {
        var transactionTimeout: Duration
        var clock: BluetoothClock
    }

    /// How much the host actor may have waiting (see ``HostLimits``).
    struct QueueLimits: Sendable {
        /// Signalling and Security Manager PDUs of one link: past this many waiting, that
        /// link's PDUs are dropped. Per link, so that a flooding peer never costs another
        /// link its credits, pairing steps or disconnection answers.
        var peerItems: Int
        /// Past this many controller events waiting, events are dropped, except those that
        /// bring links up or down (which keep the host's view of the links true). Peers'
        /// PDUs do not count here.
        var allItems: Int
    }

    /// What one batch adds to the host actor's queue.
    private struct BatchCounts {
        var peerItems: [UInt16: Int] = [:]
        var events = 0
    }

    private let controller: HCIController
    private let server: GATTServer
    private let settings: BearerSettings
    private let logger: Logger
    /// The links up, by connection handle.
    private let links = Mutex<[UInt16: L2CAPLink]>([:])
    /// Given to every bearer opened, for its client's signed writes (the host sets it).
    let signedWriteSigner = Mutex<SignedWriteSigner?>(nil)
    /// The one timer of every bearer's transactions.
    private let watchdog: ATTWatchdog
    /// The running scan's receiver; advertising reports are dropped while there is none.
    private let scanReceiver = Mutex<ScanReceiver?>(nil)
    /// One element per transport batch, for the host actor.
    let hostItems: AsyncStream<[HostItem]>
    private let hostItemsContinuation: AsyncStream<[HostItem]>.Continuation
    private let queueLimits: QueueLimits
    /// The PSM servers peers open credit-based channels to.
    let servers = L2CAPServerTable()
    /// The last signalling identifier used, shared by the host actor and the channels.
    private let signalingIdentifier = Atomic<UInt8>(0)
    /// Peers' PDUs yielded to ``hostItems`` and not yet handled (``didHandle(_:)``), by link.
    private let pendingPeerItems = Mutex<[UInt16: Int]>([:])
    /// Controller events yielded to ``hostItems`` and not yet handled.
    private let pendingEvents = Atomic<Int>(0)
    private let droppedHostItems = Atomic<Int>(0)

    init(controller: HCIController, server: GATTServer, settings: BearerSettings,
         queueLimits: QueueLimits = QueueLimits(peerItems: 256, allItems: 4096), logger: Logger) {
        self.controller = controller
        self.server = server
        self.settings = settings
        self.queueLimits = queueLimits
        self.logger = logger
        watchdog = ATTWatchdog(clock: settings.clock)
        (hostItems, hostItemsContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Returns once the host actor has handled every item yielded to ``hostItems`` before this
    /// call (at once when the stream has ended).
    func barrier() async {
        let items = hostItemsContinuation
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if case .terminated = items.yield([.barrier(continuation)]) { continuation.resume() }
        }
    }

    /// Items of ``hostItems`` dropped so far because the host actor had too many waiting.
    var droppedHostItemCount: Int { droppedHostItems.load(ordering: .relaxed) }

    /// The host actor handled these items of ``hostItems``.
    func didHandle(_ items: [HostItem]) {
        var handled = BatchCounts()
        for item in items { Self.count(item, in: &handled) }
        if handled.events > 0 { pendingEvents.subtract(handled.events, ordering: .relaxed) }
        guard !handled.peerItems.isEmpty else { return }
        pendingPeerItems.withLock { pending in
            for (handle, count) in handled.peerItems {
                let left = pending[handle, default: 0] - count
                pending[handle] = left > 0 ? left : nil
            }
        }
    }

    /// Counts an item where it is bounded: a peer's PDU under its link, an event.
    private static func count(_ item: HostItem, in counts: inout BatchCounts) {
        switch item {
        case let .signaling(handle, _), let .securityManager(handle, _): counts.peerItems[handle, default: 0] += 1
        case .event, .connected: counts.events += 1
        case .attTransactionTimeout, .transportClosed, .barrier: break
        }
    }

    /// Whether an item may join the host actor's queue, `batch` being ahead of it besides
    /// what waits already.
    private func admits(_ item: HostItem, batch: BatchCounts) -> Bool {
        switch item {
        case let .signaling(handle, _), let .securityManager(handle, _):
            let waiting = pendingPeerItems.withLock { $0[handle, default: 0] } + batch.peerItems[handle, default: 0]
            if waiting < queueLimits.peerItems { return true }
        case .event(.disconnectionComplete), .event(.le(.connectionComplete)), .event(.le(.enhancedConnectionComplete)),
             .event(.le(.enhancedConnectionCompleteV2)), .connected, .attTransactionTimeout, .transportClosed, .barrier:
            return true
        case .event:
            if pendingEvents.load(ordering: .relaxed) + batch.events < queueLimits.allItems { return true }
        }
        if droppedHostItems.add(1, ordering: .relaxed).newValue % 1000 == 1 {
            logger.warning("the host falls behind its peers and controller: dropping \(item) (\(droppedHostItemCount) dropped so far)")
        }
        return false
    }

    // MARK: Sending

    /// Sends `payload` on a fixed channel of a connection as one B-frame (Core 6.0, Vol 3,
    /// Part A, 3.1), cut into ACL fragments under the controller's credits.
    func send(_ payload: [UInt8], channel: L2CAPChannelID, connectionHandle: UInt16, completion: HCIController.ACLCompletion? = nil) {
        controller.sendACL(connectionHandle: connectionHandle, pdu: L2CAPBasicFrame.encode(channelID: channel, payload: payload), completion: completion)
    }

    /// A fresh identifier for a signalling command; never 0 (Core 6.0, Vol 3, Part A, 4).
    func nextSignalingIdentifier() -> UInt8 {
        while true {
            let identifier = signalingIdentifier.wrappingAdd(1, ordering: .relaxed).newValue
            if identifier != 0 { return identifier }
        }
    }

    // MARK: Links

    /// The link up on a connection handle, if any.
    func link(for connectionHandle: UInt16) -> L2CAPLink? {
        links.withLock { $0[connectionHandle] }
    }

    private func openLink(connectionHandle: UInt16, peer: DeviceAddress) -> L2CAPLink {
        var bearerLogger = logger
        bearerLogger[metadataKey: "connection"] = "\(Hex.format(connectionHandle))"
        let server = self.server
        let items = hostItemsContinuation
        let bearer = ATTBearer(
            connectionHandle: connectionHandle, peer: peer, transactionTimeout: settings.transactionTimeout, clock: settings.clock,
            watchdog: watchdog, logger: bearerLogger,
            send: { [weak self] pdu, completion in self?.send(pdu, channel: .att, connectionHandle: connectionHandle, completion: completion) },
            server: { pdu, bearer in server.receive(pdu, from: bearer) },
            onTransactionTimeout: { bearer in
                items.yield([.attTransactionTimeout(bearer)])
            })
        bearer.setSignedWriteSigner(signedWriteSigner.withLock { $0 })
        let link = L2CAPLink(bearer: bearer, transmit: { [weak self] payload, channel, completion in
            self?.send(payload, channel: channel, connectionHandle: connectionHandle, completion: completion)
        })
        let replaced = links.withLock { links in
            defer { links[connectionHandle] = link }
            return links[connectionHandle]
        }
        replaced?.close(with: .disconnected(reason: .connectionTimeout))
        return link
    }

    private func closeLink(connectionHandle: UInt16, error: HostError) {
        links.withLock { $0.removeValue(forKey: connectionHandle) }?.close(with: error)
    }

    /// The host ended `link` (the controller did not report its end, or the host gave up on it):
    /// it closes, and leaves the table unless a later link holds its handle. Nothing when the
    /// reader thread closed it already.
    func linkEnded(_ link: L2CAPLink, error: HostError) {
        links.withLock { links in
            if links[link.connectionHandle] === link { links[link.connectionHandle] = nil }
        }
        link.close(with: error)
    }

    // MARK: Scanning

    /// Sets (or, with `nil`, removes) the receiver of advertising reports.
    func setScanReceiver(_ receiver: ScanReceiver?) {
        scanReceiver.withLock { $0 = receiver }
    }

    // MARK: Receiving (the transport's reader thread)

    /// Routes one batch from the controller, in its order, then hands every notification
    /// sink its values once and the host actor its part once. Returns what the batch held:
    /// ``HCIBatchContent/unsolicitedDataOnly`` when it was only notifications, indications and
    /// advertising reports and no bearer awaits a response (the controller may then pause
    /// before reading again).
    func process(_ batch: [HCIInbound]) -> HCIBatchContent {
        var deliveries = NotificationDeliveries()
        var items: [HostItem] = []
        var counts = BatchCounts()
        var channelDeliveries: [L2CAPChannel] = []
        var scan = scanReceiver.withLock { $0 }.map(ScanBatch.init)
        var onlyPushedData = true
        for inbound in batch {
            switch inbound {
            case let .event(.le(.advertisingReport(event))):
                scan?.add(event)
            case let .event(.le(.extendedAdvertisingReport(event))):
                scan?.add(event)
            case let .event(event):
                append(track(event), to: &items, counts: &counts)
            case let .l2cap(connectionHandle, pdu):
                let pushed = route(pdu, connectionHandle: connectionHandle, deliveries: &deliveries, channelDeliveries: &channelDeliveries,
                                   items: &items, counts: &counts)
                onlyPushedData = onlyPushedData && pushed
            case let .transportClosed(reason):
                let open = links.withLock { links in
                    defer { links.removeAll() }
                    return Array(links.values)
                }
                open.forEach { $0.close(with: .transportClosed(reason)) }
                append(.transportClosed(reason), to: &items, counts: &counts)
            }
        }
        deliveries.flush()
        channelDeliveries.forEach { $0.deliver() }
        if let scan { scan.receiver.deliver(scan.advertisements) }
        guard !items.isEmpty else {
            return onlyPushedData && !links.withLock({ $0.values.contains { $0.bearer.isAwaitingResponse } }) ? .unsolicitedDataOnly : .other
        }
        if counts.events > 0 { pendingEvents.add(counts.events, ordering: .relaxed) }
        if !counts.peerItems.isEmpty {
            pendingPeerItems.withLock { pending in
                for (handle, count) in counts.peerItems { pending[handle, default: 0] += count }
            }
        }
        hostItemsContinuation.yield(items)
        if case .transportClosed? = items.last { hostItemsContinuation.finish() }
        return .other
    }

    /// Adds an item for the host actor, unless its queue is full for that kind of item (or,
    /// for a peer's PDU, for that link).
    private func append(_ item: HostItem, to items: inout [HostItem], counts: inout BatchCounts) {
        guard admits(item, batch: counts) else { return }
        items.append(item)
        Self.count(item, in: &counts)
    }

    /// Opens and closes links as the controller reports them, and applies Encryption Change
    /// to the link's bearer before the next PDU is routed: a request that follows the event
    /// in the controller's order is checked against the new security (the host actor hears
    /// of the event later). Returns the item for the host actor: a link opened goes with its
    /// event.
    private func track(_ event: HCIEvent) -> HostItem {
        switch event {
        case let .encryptionChange(change):
            encryptionChanged(change.connectionHandle, success: change.status.isSuccess, enabled: change.encryptionEnabled.isEncrypted,
                              keySize: nil)
        case let .encryptionChangeV2(change):
            encryptionChanged(change.connectionHandle, success: change.status.isSuccess, enabled: change.encryptionEnabled.isEncrypted,
                              keySize: Int(change.encryptionKeySize))
        case let .encryptionKeyRefreshComplete(refresh):
            encryptionChanged(refresh.connectionHandle, success: refresh.status.isSuccess, enabled: true, keySize: nil)
        case let .le(.connectionComplete(complete)) where complete.status.isSuccess:
            return connected(ConnectionCompletion(complete), peer: complete.peer)
        case let .le(.enhancedConnectionComplete(complete)) where complete.status.isSuccess:
            return connected(ConnectionCompletion(complete), peer: complete.peer)
        case let .le(.enhancedConnectionCompleteV2(complete)) where complete.status.isSuccess:
            return connected(ConnectionCompletion(complete), peer: complete.peer)
        case let .disconnectionComplete(disconnection) where disconnection.status.isSuccess:
            closeLink(connectionHandle: disconnection.connectionHandle, error: .disconnected(reason: disconnection.reason))
        default:
            break
        }
        return .event(event)
    }

    /// `peer` is the event's: the identity address where the controller resolved the peer's
    /// private address (the bearer's server and signed writes look bonds up by it).
    private func connected(_ completion: ConnectionCompletion, peer: DeviceAddress) -> HostItem {
        var completion = completion
        completion.link = openLink(connectionHandle: completion.handle, peer: peer)
        return .connected(completion)
    }

    /// The link's bearer takes the new security; a link now encrypted with a bond's key tells the
    /// GATT server, in order with the PDUs that follow, so that a bonded client gets back its
    /// subscriptions before anything else it sends (or without sending anything).
    private func encryptionChanged(_ connectionHandle: UInt16, success: Bool, enabled: Bool, keySize: Int?) {
        guard let bearer = link(for: connectionHandle)?.bearer else { return }
        let security = bearer.encryptionChanged(success: success, enabled: enabled, keySize: keySize)
        if success, security.bondIdentity != nil { server.linkEncrypted(bearer) }
    }

    /// Routes one L2CAP PDU; returns whether it was a value a GATT server pushed.
    private func route(_ pdu: ArraySlice<UInt8>, connectionHandle: UInt16, deliveries: inout NotificationDeliveries,
                       channelDeliveries: inout [L2CAPChannel], items: inout [HostItem], counts: inout BatchCounts) -> Bool {
        let frame: (channelID: L2CAPChannelID, payload: ArraySlice<UInt8>)
        do {
            frame = try L2CAPBasicFrame.parse(pdu)
        } catch {
            logger.warning("malformed L2CAP PDU on connection \(Hex.format(connectionHandle)) dropped: \(error)")
            return false
        }
        switch frame.channelID {
        case .att:
            guard let bearer = link(for: connectionHandle)?.bearer else {
                logger.debug("ATT data for unknown connection \(Hex.format(connectionHandle)) dropped")
                return false
            }
            return bearer.receive(frame.payload, deliveries: &deliveries)
        case .leSignaling:
            append(.signaling(connectionHandle: connectionHandle, payload: Array(frame.payload)), to: &items, counts: &counts)
        case .securityManager:
            append(.securityManager(connectionHandle: connectionHandle, payload: Array(frame.payload)), to: &items, counts: &counts)
        case let cid where cid.isLEDynamic:
            // A K-frame: straight to its channel, whose reader is woken once after the batch.
            // Data for an unknown CID is dropped (Core 6.0, Vol 3, Part A, 4: no channel, no answer).
            guard let channel = link(for: connectionHandle)?.channel(localCID: cid) else {
                logger.debug("L2CAP data for unknown channel \(cid) on connection \(Hex.format(connectionHandle)) dropped")
                return false
            }
            if channel.receive(frame.payload) { channelDeliveries.append(channel) }
            return true
        default:
            logger.debug("L2CAP data on unsupported channel \(frame.channelID) dropped")
        }
        return false
    }
}

/// What one transport batch's advertising reports make for the running scan, all stamped
/// with the batch's arrival time.
private struct ScanBatch {
    let receiver: ScanReceiver
    let time = ContinuousClock.now
    var advertisements: [Advertisement] = []

    init(receiver: ScanReceiver) {
        self.receiver = receiver
    }

    mutating func add(_ event: LEAdvertisingReportEvent) {
        receiver.assemble(event, at: time, into: &advertisements)
    }

    mutating func add(_ event: LEExtendedAdvertisingReportEvent) {
        receiver.assemble(event, at: time, into: &advertisements)
    }
}
