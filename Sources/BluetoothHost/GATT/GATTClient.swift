import BluetoothCore
import BluetoothHCI
import Logging

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
}

/// The GATT client of one connection: the procedures of Core 6.0, Vol 3, Part G, 4 over the
/// connection's ATT bearer. One request is outstanding at a time; the others wait in order.
/// Every procedure fails with a ``HostError`` (`.att` for an Error Response, `.disconnected`
/// when the link drops, `.attTransactionTimeout` when the peer stops answering).
public actor GATTClient {
    /// Writes an ATT PDU on the bearer; the completion runs once the controller has it.
    public typealias Sender = @Sendable (_ pdu: [UInt8], _ completion: HCIController.ACLCompletion?) -> Void

    enum InboxItem: Sendable {
        case pdu([UInt8])
        case peerMTU(UInt16)
        case closed(HostError)
    }

    typealias Ticket = CheckedContinuation<ATTPDU, any Error>

    private let sendPDU: Sender
    private let closeLink: @Sendable () -> Void
    private let transactionTimeout: Duration
    private let clock: BluetoothClock
    let logger: Logger
    private let inbox: AsyncStream<InboxItem>.Continuation

    /// The ATT MTU of the bearer: 23 until exchanged.
    public private(set) var mtu: UInt16 = ATTPDU.defaultLEMTU
    private var hasExchangedMTU = false
    /// The MTU exchange under way, which later callers wait for.
    private var mtuExchange: Task<UInt16, any Error>?
    private var transactions = ATTTransactionQueue<Ticket>()
    /// One watchdog per bearer checks the outstanding request's deadline (not a timer task
    /// per request: those cost more than the request itself).
    private var watchdog: Task<Void, Never>?
    /// When the outstanding request went out.
    private var outstandingSince: BluetoothClock.Instant?
    private var nextTransactionID: UInt64 = 0
    /// Set once the bearer can no longer be used.
    private(set) var closedError: HostError?

    var subscribers: [UInt16: [UInt64: AsyncThrowingStream<[UInt8], any Error>.Continuation]] = [:]
    let notificationListeners = AsyncStreamFanOut<GATTNotification>()
    let serviceChangeListeners = AsyncStreamFanOut<GATTServiceChange>()
    var nextListenerID: UInt64 = 0
    /// Services discovered so far, kept so that Service Changed can say what it invalidated.
    var discoveredServices: [GATTService] = []
    var serviceChangedValueHandle: UInt16?
    var subscriptionConfigurations: [UInt16: SubscriptionConfiguration] = [:]
    let longWriteGate = AsyncSerialGate()
    /// Serializes the Client Characteristic Configuration writes of concurrent subscribers.
    let subscriptionGate = AsyncSerialGate()

    public init(transactionTimeout: Duration = .seconds(30), clock: BluetoothClock = .continuous, logger: Logger = Logger(label: "bluejay.gatt"),
                send: @escaping Sender, closeLink: @escaping @Sendable () -> Void = {}) {
        self.sendPDU = send
        self.closeLink = closeLink
        self.transactionTimeout = transactionTimeout
        self.clock = clock
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: InboxItem.self, bufferingPolicy: .unbounded)
        inbox = continuation
        Task { await self.run(stream) }
    }

    // MARK: From the host (any thread, in link order)

    /// A client-bound ATT PDU from the peer (response, notification or indication).
    public nonisolated func receive(_ pdu: [UInt8]) { inbox.yield(.pdu(pdu)) }

    /// The peer, as a client, exchanged the MTU with this device's server; the bearer's MTU
    /// is shared by both roles (Core 6.0, Vol 3, Part F, 3.4.2).
    nonisolated func peerRequestedMTU(_ clientMTU: UInt16) { inbox.yield(.peerMTU(clientMTU)) }

    /// The link is gone: every pending and later operation fails with `error`.
    nonisolated func connectionDidClose(error: HostError) {
        inbox.yield(.closed(error))
        inbox.finish()
    }

    private func run(_ stream: AsyncStream<InboxItem>) async {
        for await item in stream {
            switch item {
            case let .pdu(bytes): handle(bytes)
            case let .peerMTU(clientMTU): adoptPeerMTU(clientMTU)
            case let .closed(error): close(with: error)
            }
        }
    }

    // MARK: Requests

    /// Sends a request and returns the peer's response. An Error Response throws
    /// ``HostError/att(_:)``.
    func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        if let closedError { throw closedError }
        nextTransactionID += 1
        let id = nextTransactionID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Ticket) in
                if let closedError {
                    continuation.resume(throwing: closedError)
                    return
                }
                if let ready = transactions.enqueue(.init(id: id, request: pdu, ticket: continuation)) {
                    transmit(ready)
                }
            }
        } onCancel: {
            Task { await self.cancelRequest(id: id) }
        }
    }

    private func cancelRequest(id: UInt64) {
        transactions.cancel(id: id)?.resume(throwing: HostError.cancelled)
    }

    private func transmit(_ transaction: ATTTransactionQueue<Ticket>.Transaction) {
        sendPDU(transaction.request.encode(), nil)
        outstandingSince = clock.now
        if watchdog == nil { startWatchdog() }
    }

    private func startWatchdog() {
        let clock = clock
        var wake = clock.now + transactionTimeout
        if let since = outstandingSince { wake = since + transactionTimeout }
        watchdog = Task { [weak self, wake] in
            var next = wake
            while true {
                do { try await clock.sleep(until: next) } catch { return }
                guard let self, let later = await self.checkTransactionDeadline() else { return }
                next = later
            }
        }
    }

    /// Fails the bearer if the outstanding request is past its deadline; otherwise returns when
    /// the watchdog looks again (`nil` once the bearer is closed).
    private func checkTransactionDeadline() -> BluetoothClock.Instant? {
        guard closedError == nil else { return nil }
        let now = clock.now
        guard let since = outstandingSince, transactions.outstanding != nil else { return now + transactionTimeout }
        let deadline = since + transactionTimeout
        guard now >= deadline else { return deadline }
        transactionDidTimeOut()
        return nil
    }

    /// No response within the transaction timeout: the bearer is unusable
    /// (Core 6.0, Vol 3, Part F, 3.3.3), so it closes and the link is dropped.
    private func transactionDidTimeOut() {
        logger.error("ATT transaction timeout waiting for \(transactions.outstanding.map { "\($0.request.opcode)" } ?? "?")")
        let tickets = transactions.removeAll()
        closedError = .attBearerClosed
        tickets.forEach { $0.resume(throwing: HostError.attTransactionTimeout) }
        failListeners(with: .attTransactionTimeout)
        closeLink()
    }

    /// Sends a command or confirmation: no response; returns once the controller took it.
    func sendUnacknowledged(_ pdu: ATTPDU) async throws {
        if let closedError { throw closedError }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            sendPDU(pdu.encode()) { result in
                continuation.resume(with: result.mapError { HostError.wrap($0) as any Error })
            }
        }
    }

    // MARK: Incoming

    private func handle(_ bytes: [UInt8]) {
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU.decode(bytes)
        } catch {
            logger.warning("malformed ATT PDU dropped: \(error)")
            // Even a malformed indication is confirmed, or the server could send no other
            // (Core 6.0, Vol 3, Part F, 3.4.7.2).
            if bytes.first == ATTOpcode.handleValueIndication.rawValue, closedError == nil {
                sendPDU(ATTPDU.handleValueConfirmation(.init()).encode(), nil)
            }
            failOutstandingIfAnswered(by: bytes.first, error: .protocolViolation("malformed ATT response: \(error)"))
            return
        }
        switch pdu {
        case let .handleValueNotification(notification):
            deliver(GATTNotification(handle: notification.handle, value: notification.value, isIndication: false))
        case let .multipleHandleValueNotification(notifications):
            for entry in notifications.values {
                deliver(GATTNotification(handle: entry.handle, value: entry.value, isIndication: false))
            }
        case let .handleValueIndication(indication):
            deliver(GATTNotification(handle: indication.handle, value: indication.value, isIndication: true))
            // The server sends no other indication until this confirmation (Vol 3, Part F, 3.4.7.2).
            if closedError == nil { sendPDU(ATTPDU.handleValueConfirmation(.init()).encode(), nil) }
        default:
            guard let (answered, next) = transactions.receive(pdu) else {
                logger.warning("unexpected ATT \(pdu.opcode) dropped (no matching request)")
                return
            }
            outstandingSince = nil
            if case let .errorResponse(error) = pdu {
                answered.ticket?.resume(throwing: HostError.att(ATTError(error)))
            } else {
                answered.ticket?.resume(returning: pdu)
            }
            if let next { transmit(next) }
        }
    }

    /// A response that cannot be decoded still ends the outstanding transaction, if its
    /// opcode is the one expected, so that the bearer does not stall until the timeout.
    private func failOutstandingIfAnswered(by opcodeByte: UInt8?, error: HostError) {
        guard let opcodeByte, let current = transactions.outstanding else { return }
        let opcode = ATTOpcode(rawValue: opcodeByte)
        guard opcode == current.request.expectedResponseOpcode || opcode == .errorResponse else { return }
        guard let (answered, next) = transactions.finishOutstanding() else { return }
        outstandingSince = nil
        answered.ticket?.resume(throwing: error)
        if let next { transmit(next) }
    }

    private func adoptPeerMTU(_ clientMTU: UInt16) {
        guard !hasExchangedMTU else { return }
        hasExchangedMTU = true
        mtu = max(ATTPDU.defaultLEMTU, min(clientMTU, 517))
    }

    private func close(with error: HostError) {
        guard closedError == nil || closedError == .attBearerClosed else { return }
        closedError = error
        watchdog?.cancel()
        transactions.removeAll().forEach { $0.resume(throwing: error) }
        failListeners(with: error)
    }

    // MARK: MTU

    /// Exchanges the ATT MTU (Core 6.0, Vol 3, Part G, 4.3.1) and returns the bearer's new
    /// MTU: the smaller of `preferred` and what the server can receive. Done once per
    /// connection; later calls return the current MTU.
    @discardableResult
    public func exchangeMTU(_ preferred: UInt16 = 517) async throws -> UInt16 {
        if let mtuExchange { return try await mtuExchange.value }
        guard !hasExchangedMTU else { return mtu }
        guard preferred >= ATTPDU.defaultLEMTU else {
            throw HostError.invalidArgument("the ATT MTU is at least \(ATTPDU.defaultLEMTU)")
        }
        hasExchangedMTU = true
        let exchange = Task {
            let response = try await request(.exchangeMTURequest(.init(clientRxMTU: preferred)))
            guard case let .exchangeMTUResponse(exchange) = response else { throw unexpected(response) }
            mtu = max(ATTPDU.defaultLEMTU, min(preferred, exchange.serverRxMTU))
            logger.debug("ATT MTU \(mtu)")
            return mtu
        }
        mtuExchange = exchange
        return try await exchange.value
    }

    func unexpected(_ pdu: ATTPDU) -> HostError {
        .protocolViolation("unexpected \(pdu.opcode)")
    }
}
