import BluetoothCore
import BluetoothHCI
import Logging
import Synchronization

/// This device's GATT server (Core 6.0, Vol 3, Part G): an attribute database built from
/// ``GATTServiceDefinition``s, served to every connected client over ATT.
///
/// The GAP service (Device Name, Appearance) and the GATT service (Service Changed) are
/// always present. Every request of Vol 3, Part F, 3.4 is answered, with the specification's
/// Error Responses and values cut to the bearer's MTU. Each connection has its own Client
/// Characteristic Configurations, prepare queue, indication queue (one indication at a time,
/// each confirmed) and notification budget (see ``GATTServerSettings``). Adding or removing
/// a service while clients are connected indicates Service Changed to those that asked.
///
/// ```swift
/// let service = try await host.server.addService(GATTServiceDefinition(uuid: "180F", characteristics: [
///     GATTCharacteristicDefinition(uuid: "2A19", properties: [.read, .notify], value: [100]),
/// ]))
/// if let level = service.characteristic("2A19") {
///     let update = try await host.server.updateValue([99], forHandle: level.valueHandle)
///     if !update.reachedAllSubscribers { /* no subscribers, or wait for .readyToUpdateSubscribers */ }
/// }
/// ```
public actor GATTServer {
    /// Writes an ATT PDU to a connection; the completion runs once the controller has it.
    public typealias Sender = @Sendable (_ connectionHandle: UInt16, _ pdu: [UInt8], _ completion: HCIController.ACLCompletion?) -> Void

    enum InboxItem: Sendable {
        /// A Handle Value Confirmation: handled at once, so that an indication is never held
        /// up behind a request waiting for an application handler.
        case confirmation([UInt8], ServerLink)
        /// The link ended; with its bearer, only the client on that bearer is closed (a later
        /// link may hold the handle already).
        case closed(connectionHandle: UInt16, bearer: ATTBearer?)
        /// The controller took a notification (or the link failed it).
        case notificationLeft(clientID: UInt64, connectionHandle: UInt16)
    }

    let sendPDU: Sender
    /// The ATT MTU this server can receive, answered to Exchange MTU Requests.
    let preferredMTU: UInt16
    let logger: Logger
    let inbox: AsyncStream<InboxItem>.Continuation

    var database = AttributeDatabase()
    var clients: [UInt16: ConnectedClient] = [:]
    /// Limits and timeouts; change them with ``configure(_:)``.
    public private(set) var settings = GATTServerSettings()
    /// The clock of the handler and indication timeouts.
    let clock: BluetoothClock
    let eventListeners = AsyncStreamFanOut<GATTServerEvent>()
    private var nextIdentifier: UInt64 = 0
    /// Bonded clients' state between connections and what they missed, by bond identity
    /// (GATTServer+BondedClients.swift).
    var bondedClients = BondedClientRegistry(capacity: GATTServer.maximumRememberedClients)
    /// ``droppedDeferredIndicationCount``, readable from any thread.
    nonisolated let deferredIndicationDrops = Mutex(0)
    /// Keeps bonded clients' state between runs (``setClientStateStorage(_:)``); none by default.
    var clientStateStorage: GATTClientStateStorage?
    /// The latest save of a bonded client's state, which the next one follows.
    var pendingClientStateSave: Task<Void, Never>?
    /// Whether this device has a key for a peer (``setKeyAvailability(_:)``); none by default.
    var keyAvailability: @Sendable (DeviceAddress) -> Bool = { _ in false }
    /// Checks Signed Write Commands (``setSignedWriteVerifier(_:)``); none by default.
    var signedWriteVerifier: SignedWriteVerifier?
    /// Signed Write Commands dropped: not signed right, replayed, or not permitted.
    public internal(set) var rejectedSignedWriteCount = 0
    /// Grants accesses that require authorization (``setAuthorizationHandler(_:)``).
    var authorizationHandler: GATTAuthorizationHandler?
    /// The loopback bearers of clients wired in memory, by connection handle: their MTU and
    /// security (``setSecurity(_:connectionHandle:)``), and the way out to the server's sender.
    nonisolated let memoryBearers = Mutex<[UInt16: ATTBearer]>([:])
    /// How many PDUs each link may have waiting (``GATTServerSettings/maximumQueuedPDUs``),
    /// and how many were dropped past it.
    nonisolated let inboundLimit = InboundPDULimit(limit: GATTServerSettings().maximumQueuedPDUs)
    /// Set by ``close()``.
    private nonisolated let isClosed = Mutex(false)

    public init(preferredMTU: UInt16 = 517, clock: BluetoothClock = .continuous, logger: Logger = Logger(label: "bluejay.gatt-server"),
                send: @escaping Sender) {
        self.sendPDU = send
        self.clock = clock
        self.preferredMTU = max(ATTPDU.defaultLEMTU, min(preferredMTU, 517))
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: InboxItem.self, bufferingPolicy: .unbounded)
        inbox = continuation
        // Holds the server only while it handles an item: a server nobody uses any more goes
        // (its deinit finishes the inbox, which ends this task).
        Task { [weak self] in
            for await item in stream {
                guard let self else { return }
                await self.handle(item)
            }
        }
    }

    deinit {
        inbox.finish()
        // Links still known end with the server: their serving tasks would otherwise wait on
        // their queues for ever.
        for client in clients.values {
            client.link.bearer.serverQueue.finish()
            client.indicationTimer?.cancel()
        }
        for bearer in memoryBearers.withLock({ $0.values }) { bearer.serverQueue.finish() }
    }

    /// Stops taking requests (the host's transport is gone): the inbox ends, and nothing a
    /// link sends from now on is taken.
    public nonisolated func close() {
        isClosed.withLock { $0 = true }
        inbox.finish()
        for bearer in memoryBearers.withLock({ $0.values }) { bearer.serverQueue.finish() }
    }

    // MARK: Entry points (any thread, in link order)

    /// A server-bound ATT PDU (request, command, confirmation) from a connection's bearer, on
    /// the transport's reader thread.
    nonisolated func receive(_ pdu: [UInt8], from bearer: ATTBearer) {
        receive(pdu, on: ServerLink(bearer))
    }

    /// A server-bound ATT PDU from a client on a bearer that is not a Host connection, e.g. a
    /// ``GATTClient`` wired to this server in memory. Answers go to the server's sender with
    /// `connectionHandle`.
    public nonisolated func receive(_ pdu: [UInt8], connectionHandle: UInt16, peer: DeviceAddress? = nil) {
        receive(pdu, on: ServerLink(connectionHandle: connectionHandle, peer: peer, bearer: memoryBearer(connectionHandle), isWiredInMemory: true))
    }

    /// Requests and commands join the link's queue (the bearer's server half), with the link's
    /// security as they arrive; a confirmation goes around it. Each is counted against the
    /// link's limit until handled.
    private nonisolated func receive(_ pdu: [UInt8], on link: ServerLink) {
        guard let first = pdu.first, !isClosed.withLock({ $0 }) else { return }
        let limit = inboundLimit.limit
        if first == ATTOpcode.handleValueConfirmation.rawValue {
            switch link.bearer.serverQueue.admitBesideQueue(limit: limit) {
            case .queued: inbox.yield(.confirmation(pdu, link))
            case .refused: refused(link)
            case .finished: break
            }
            return
        }
        queue(.pdu(pdu, security: link.bearer.security), on: link, limit: limit)
    }

    /// Puts `request` in the link's queue, and starts serving the queue with its first.
    nonisolated func queue(_ request: ServerRequest, on link: ServerLink, limit: Int, onlyIfServed: Bool = false) {
        switch link.bearer.serverQueue.enqueue(request, limit: limit, onlyIfServed: onlyIfServed) {
        case .queued(isFirst: true): serveQueue(of: link)
        case .queued(isFirst: false), .finished: break
        case .refused: refused(link)
        }
    }

    /// The one task that serves a link's queue, one request at a time, until the link ends.
    /// It holds the server only while it serves.
    private nonisolated func serveQueue(of link: ServerLink) {
        let queue = link.bearer.serverQueue
        Task { [weak self] in
            for await request in queue.requests {
                if case .pdu = request { queue.taken() }
                guard let self else { return }
                await self.serve(request, on: link)
            }
        }
    }

    /// The loopback bearer of a client wired in memory, made on first use.
    nonisolated func memoryBearer(_ connectionHandle: UInt16) -> ATTBearer {
        memoryBearers.withLock { bearers in
            if let bearer = bearers[connectionHandle] { return bearer }
            let sendPDU = self.sendPDU
            let bearer = ATTBearer(connectionHandle: connectionHandle, peer: DeviceAddress(.zero, type: .public), clock: clock, logger: logger,
                                   send: { pdu, completion in sendPDU(connectionHandle, pdu, completion) })
            bearers[connectionHandle] = bearer
            return bearer
        }
    }

    /// PDUs dropped so far because their connection had ``GATTServerSettings/maximumQueuedPDUs``
    /// waiting already.
    public nonisolated var droppedPDUCount: Int { inboundLimit.droppedCount }

    /// A PDU past the link's limit: dropped, counted, and logged with the first of a run.
    private nonisolated func refused(_ link: ServerLink) {
        if inboundLimit.countDrop() {
            logger.warning("connection \(Hex.format(link.connectionHandle)) sends faster than the server answers: dropping ATT PDUs (\(inboundLimit.droppedCount) so far)")
        }
    }

    /// A client wired in memory (``receive(_:connectionHandle:peer:)``) went away: forget its
    /// configurations, prepare queue and indications. A Host's connections are closed by the
    /// host itself, by their bearer; called for a Host connection's handle, this closes
    /// whichever client talks on that handle now.
    public nonisolated func connectionDidClose(handle: UInt16) {
        // A client wired in memory that talks again on this handle is a new link, with a new
        // loopback bearer, whatever the inbox still holds of the old one.
        let bearer = memoryBearers.withLock { $0.removeValue(forKey: handle) }
        bearer?.serverQueue.finish()
        inbox.yield(.closed(connectionHandle: handle, bearer: bearer))
    }

    /// A Host connection's link ended: forget what its client had, unless a later link on the
    /// same handle has talked already (then that client's state is left alone; the ended
    /// link's went as the later one's first PDU arrived).
    nonisolated func connectionDidClose(_ bearer: ATTBearer) {
        bearer.serverQueue.finish()
        inbox.yield(.closed(connectionHandle: bearer.connectionHandle, bearer: bearer))
    }

    private func handle(_ item: InboxItem) {
        switch item {
        case let .confirmation(bytes, link): acceptConfirmation(bytes, from: link)
        case let .closed(handle, bearer): closeClient(handle, bearer: bearer)
        case let .notificationLeft(clientID, handle): notificationDidLeave(clientID: clientID, connectionHandle: handle)
        }
    }

    private func acceptConfirmation(_ bytes: [UInt8], from link: ServerLink) {
        link.bearer.serverQueue.taken()
        guard !link.bearer.serverQueue.isFinished else { return }
        didReceiveConfirmation(bytes, connectionHandle: client(for: link).connectionHandle)
    }

    /// Serves one request of a link's queue, in the link's order. A link that ended (its end
    /// may reach the server before what it had queued) is served no more.
    private func serve(_ request: ServerRequest, on link: ServerLink) async {
        guard !link.bearer.serverQueue.isFinished else { return }
        let client = client(for: link)
        switch request {
        case let .pdu(bytes, security):
            await serve(bytes, security: security, clientID: client.id, connectionHandle: link.connectionHandle)
        case let .encrypted(security):
            await linkDidEncrypt(security, clientID: client.id, connectionHandle: link.connectionHandle)
        }
    }

    /// The client of `link`, made on its first use. A client of an earlier link on the same
    /// handle (its end not yet in the inbox: the host actor tells the server after the reader
    /// thread has routed the next link's first PDU) is closed first, so that the new peer
    /// never gets the old one's subscriptions, bond state or indications.
    func client(for link: ServerLink) -> ConnectedClient {
        if let existing = clients[link.connectionHandle] {
            if existing.link.bearer === link.bearer { return existing }
            closeClient(link.connectionHandle, bearer: existing.link.bearer)
        }
        let client = ConnectedClient(id: makeIdentifier(), link: link,
                                     prepareQueue: PreparedWriteQueue(capacity: settings.maximumPreparedWrites),
                                     indications: IndicationQueue(capacity: settings.maximumQueuedIndications))
        clients[link.connectionHandle] = client
        return client
    }

    /// Closes the client on `connectionHandle`; with `bearer`, only when it is that bearer's.
    /// Its link's queue ends: what it still holds is not served.
    private func closeClient(_ connectionHandle: UInt16, bearer: ATTBearer?) {
        if let bearer, let current = clients[connectionHandle], current.link.bearer !== bearer { return }
        // Without a bearer (a client wired in memory that never talked went away), a client
        // wired in memory since, on a loopback bearer of its own, is a later link: left alone.
        if bearer == nil, let current = clients[connectionHandle],
           memoryBearers.withLock({ $0[connectionHandle] }) === current.link.bearer { return }
        let client = clients.removeValue(forKey: connectionHandle)
        // With the link's security as it ends (its bearer, a Host connection's or a loopback one, still holds it).
        if let client { leaveBondIdentity(of: client) }
        guard let client else { return }
        client.link.bearer.serverQueue.finish()
        client.indicationTimer?.cancel()
        var indications = client.indications
        for item in indications.removeAll() {
            item.ticket?.resume(throwing: GATTServerError.notConnected(connectionHandle: connectionHandle))
        }
        for (valueHandle, configuration) in client.configurations where !configuration.isEmpty {
            broadcast(.subscriptionChanged(subscription(client, valueHandle: valueHandle, configuration: [])))
        }
    }

    /// The connected client, if it is still the one with this identifier.
    func client(id: UInt64, connectionHandle: UInt16) -> ConnectedClient? {
        guard let client = clients[connectionHandle], client.id == id else { return nil }
        return client
    }

    /// The connection's ATT MTU: the bearer's, which both roles share.
    func mtu(of client: ConnectedClient) -> UInt16 {
        client.link.bearer.mtu
    }

    /// The ATT MTU of a connection as this server uses it (23 for an unknown connection).
    public func mtu(connectionHandle: UInt16) -> UInt16 {
        guard let client = clients[connectionHandle] else { return ATTPDU.defaultLEMTU }
        return mtu(of: client)
    }

    /// The connections that have talked to this server and are still up.
    public var connectionHandles: [UInt16] { clients.keys.sorted() }

    func makeIdentifier() -> UInt64 {
        nextIdentifier += 1
        return nextIdentifier
    }

    /// Sends through the connection's ATT bearer, the one endpoint both roles share (a Host
    /// connection's router builds the frame; a loopback bearer hands it to the server's sender).
    func send(_ pdu: ATTPDU, to connectionHandle: UInt16, completion: HCIController.ACLCompletion? = nil) {
        guard let bearer = clients[connectionHandle]?.link.bearer else {
            completion?(.failure(.connectionClosed(connectionHandle: connectionHandle)))
            return
        }
        bearer.send(pdu.encode(), completion: completion)
    }

    // MARK: Settings

    /// Changes limits and timeouts; queues of connections already known keep their sizes.
    public func configure(_ settings: GATTServerSettings) {
        self.settings = settings
        inboundLimit.setLimit(settings.maximumQueuedPDUs)
    }

    // MARK: Events

    /// A new stream of server events.
    public func events() -> AsyncStream<GATTServerEvent> {
        eventListeners.makeStream()
    }

    func broadcast(_ event: GATTServerEvent) {
        eventListeners.yield(event)
    }
}
