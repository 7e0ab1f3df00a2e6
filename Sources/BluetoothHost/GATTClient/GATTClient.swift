import BluetoothCore
import BluetoothHCI
import Logging
import Synchronization

/// A value a server pushed: a notification, or an indication (already confirmed).
public struct GATTNotification: Sendable, Equatable {
    public var handle: UInt16
    public var value: [UInt8]
    public var isIndication: Bool

    public init(handle: UInt16, value: [UInt8], isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}

/// The peer's database changed (a Service Changed indication, Core 6.0, Vol 3, Part G, 7.1).
public struct GATTServiceChange: Sendable, Equatable {
    /// The handles that changed; anything discovered there must be discovered again.
    public var affectedHandles: ClosedRange<UInt16>
    /// Services this client had discovered in that range, now dropped from its cache.
    public var invalidatedServices: [GATTService]

    public init(affectedHandles: ClosedRange<UInt16>, invalidatedServices: [GATTService]) {
        self.affectedHandles = affectedHandles
        self.invalidatedServices = invalidatedServices
    }
}

/// The GATT client of one connection: the procedures of Core 6.0, Vol 3, Part G, 4 over the
/// connection's ``ATTBearer``. One request is outstanding at a time; the others wait in order.
/// Every procedure fails with a ``HostError`` (`.att` for an Error Response, `.disconnected`
/// when the link drops, `.attTransactionTimeout` when the peer stops answering).
///
/// Not an actor: a procedure runs in its caller's task and the bearer resumes it from the
/// transport's reader thread, so a read costs one handoff each way. The client's own state
/// (the services discovered, the configurations it wrote) is under a lock.
public final class GATTClient: Sendable {
    /// Writes an ATT PDU on the bearer; the completion runs once the controller has it.
    public typealias Sender = @Sendable (_ pdu: [UInt8], _ completion: HCIController.ACLCompletion?) -> Void

    struct State: Sendable {
        /// Services discovered so far, kept so that Service Changed can say what it invalidated.
        var discoveredServices: [GATTService] = []
        /// A whole database known to be the peer's (from the cache, its Database Hash
        /// matching, or just discovered): discovery is answered from it without a PDU.
        var knownDatabase: [GATTDiscoveredService]?
        /// Told when the known database turns out stale (Service Changed, Database Out Of Sync).
        var databaseStaleHandler: (@Sendable () -> Void)?
        /// Discovery requests sent (see ``discoveryRequestCount``).
        var discoveryRequests = 0
        var serviceChangedValueHandle: UInt16?
        /// The sink that watches Service Changed indications, once enabled.
        var serviceChangedSink: NotificationSink?
        var subscriptionConfigurations: [UInt16: SubscriptionConfiguration] = [:]
        /// The MTU exchange under way, which callers during it wait for (dropped once done:
        /// later callers get the bearer's MTU).
        var mtuExchange: Task<UInt16, any Error>?
    }

    /// The connection's ATT bearer: its MTU, transactions and notifications.
    public let bearer: ATTBearer
    let logger: Logger
    let state = Mutex(State())
    let serviceChangeListeners = AsyncStreamFanOut<GATTServiceChange>()
    let longWriteGate = AsyncSerialGate()
    /// Serializes the Client Characteristic Configuration writes of concurrent subscribers.
    let subscriptionGate = AsyncSerialGate()

    /// A client on a connection's bearer.
    init(bearer: ATTBearer) {
        self.bearer = bearer
        logger = bearer.logger
    }

    /// A client on a bearer of its own that sends with `send` and hears what ``receive(_:)``
    /// is given: a client wired to a server in memory (tests, benchmarks).
    public convenience init(transactionTimeout: Duration = .seconds(30), clock: BluetoothClock = .continuous,
                            logger: Logger = Logger(label: "bluejay.gatt"),
                            send: @escaping Sender, closeLink: @escaping @Sendable () -> Void = {}) {
        self.init(bearer: ATTBearer(connectionHandle: 0, peer: DeviceAddress(.zero, type: .public), transactionTimeout: transactionTimeout,
                                    clock: clock, logger: logger, send: send, onTransactionTimeout: { _ in closeLink() }))
    }

    /// A client-bound ATT PDU from the peer (response, notification or indication), for a
    /// client made with ``init(transactionTimeout:clock:logger:send:closeLink:)``; a host's
    /// clients hear from their connection's bearer directly.
    public func receive(_ pdu: [UInt8]) {
        var deliveries = NotificationDeliveries()
        bearer.receive(pdu[...], deliveries: &deliveries)
        deliveries.flush()
    }

    /// The link is gone: every pending and later operation fails with `error`.
    func connectionDidClose(error: HostError) {
        bearer.close(with: error)
        serviceChangeListeners.finish()
    }

    /// The ATT MTU of the bearer: 23 until exchanged.
    public var mtu: UInt16 { bearer.mtu }

    /// Set once the bearer can no longer be used.
    var closedError: HostError? { bearer.closedError }

    // MARK: Requests

    /// Sends a request and returns the peer's response. An Error Response throws
    /// ``HostError/att(_:)``.
    func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        if Self.isDiscovery(pdu) { state.withLock { $0.discoveryRequests += 1 } }
        do {
            return try await bearer.request(pdu)
        } catch {
            throw noticing(error)
        }
    }

    /// ``request(_:)`` for a caller that is not a task: `handler` gets the outcome on the
    /// thread that ends the wait (see ``ATTBearer/request(_:within:handler:)``).
    func request(_ pdu: ATTPDU, within scope: RequestScope,
                 handler: @escaping @Sendable (Result<ATTPDU, any Error>) -> Void) {
        if Self.isDiscovery(pdu) { state.withLock { $0.discoveryRequests += 1 } }
        bearer.request(pdu, within: scope) { [self] result in handler(result.mapError(noticing)) }
    }

    /// A request's error, after what it tells the client is taken in.
    private func noticing(_ error: any Error) -> any Error {
        if case let HostError.att(refusal) = error, refusal.code == .databaseOutOfSync {
            // Core 6.0, Vol 3, Part G, 2.5.2.1: the server changed its database and this client
            // has not learnt it yet: whatever was discovered may name the wrong handles.
            databaseWentStale(because: "the server answered Database Out Of Sync")
        }
        return error
    }

    /// Sends a command or confirmation: no response; returns once the controller took it.
    func sendUnacknowledged(_ pdu: ATTPDU) async throws {
        try await bearer.send(pdu)
    }

    // MARK: MTU

    /// Exchanges the ATT MTU (Core 6.0, Vol 3, Part G, 4.3.1) and returns the bearer's new
    /// MTU: the smaller of `preferred` and what the server can receive. Done once per
    /// bearer (in either role): callers during the exchange share its outcome, later calls
    /// return the current MTU (23 if the exchange failed: it is not tried again).
    @discardableResult
    public func exchangeMTU(_ preferred: UInt16 = 517) async throws -> UInt16 {
        guard preferred >= ATTPDU.defaultLEMTU else {
            throw HostError.invalidArgument("the ATT MTU is at least \(ATTPDU.defaultLEMTU)")
        }
        let exchange = state.withLock { state -> Task<UInt16, any Error>? in
            if let running = state.mtuExchange { return running }
            guard bearer.beginMTUExchange() else { return nil }
            let bearer = self.bearer
            let logger = self.logger
            let exchange = Task { [weak self] in
                // Forgotten once done (a task keeps its memory while referenced).
                defer { self?.state.withLock { $0.mtuExchange = nil } }
                let response = try await bearer.request(.exchangeMTURequest(.init(clientRxMTU: preferred)))
                guard case let .exchangeMTUResponse(exchange) = response else {
                    throw HostError.protocolViolation("unexpected \(response.opcode)")
                }
                bearer.setExchangedMTU(clientMTU: preferred, serverMTU: exchange.serverRxMTU)
                logger.debug("ATT MTU \(bearer.mtu)")
                return bearer.mtu
            }
            state.mtuExchange = exchange
            return exchange
        }
        guard let exchange else { return mtu }
        return try await exchange.value
    }

    /// How many discovery requests this client sent: Read By Group Type, Find By Type Value,
    /// Find Information, and Read By Type of include or characteristic declarations
    /// (Core 6.0, Vol 3, Part G, 4.4 to 4.7). A database answered from the cache sends none.
    public var discoveryRequestCount: Int { state.withLock { $0.discoveryRequests } }

    static func isDiscovery(_ pdu: ATTPDU) -> Bool {
        switch pdu {
        case .readByGroupTypeRequest, .findByTypeValueRequest, .findInformationRequest: return true
        case let .readByTypeRequest(request):
            return request.attributeType == GATTAttributeType.characteristic || request.attributeType == GATTAttributeType.include
        default: return false
        }
    }

    func unexpected(_ pdu: ATTPDU) -> HostError {
        .protocolViolation("unexpected \(pdu.opcode)")
    }
}
