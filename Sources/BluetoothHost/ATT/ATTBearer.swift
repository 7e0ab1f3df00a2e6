import BluetoothCore
import BluetoothHCI
import Logging
import Synchronization

/// The ATT bearer of one connection (Core 6.0, Vol 3, Part F, 3.2.11): the one place that owns
/// its MTU, splits its traffic between this device's client and server roles, runs the
/// client's sequential transactions with their 30 s timeout, and sends its PDUs.
///
/// Incoming PDUs are handled on the transport's reader thread, synchronously: a response
/// resumes its caller, a notification goes to its subscribers' sinks (collected per batch of
/// the transport, so an app hears once per batch), a server-bound PDU goes to the GATT server.
/// Its state is a plain value under its own lock; PDUs are sent once the lock is released
/// (the transaction rule already orders requests: the next leaves only after a response), so a
/// sender may hand a response straight back.
public final class ATTBearer: Sendable {
    /// The caller of a request, waiting for its response: a task suspended in
    /// ``request(_:)``, or the handler of ``request(_:within:handler:)``. Resumed once.
    enum Ticket: Sendable {
        case task(CheckedContinuation<ATTPDU, any Error>)
        case handler(@Sendable (Result<ATTPDU, any Error>) -> Void)

        func resume(returning response: ATTPDU) { resume(with: .success(response)) }
        func resume(throwing error: any Error) { resume(with: .failure(error)) }

        private func resume(with result: Result<ATTPDU, any Error>) {
            switch self {
            case let .task(continuation): continuation.resume(with: result)
            case let .handler(handler): handler(result)
            }
        }
    }

    private struct State {
        var mtu = ATTPDU.defaultLEMTU
        var hasExchangedMTU = false
        var transactions = ATTTransactionQueue<Ticket>()
        var nextTransactionID: UInt64 = 0
        /// When the outstanding request went out.
        var outstandingSince: BluetoothClock.Instant?
        /// Set once the bearer can no longer carry requests.
        var closedError: HostError?
        /// Callers of ``send(_:)`` with a deadline, waiting for the controller to take their PDU
        /// (for buffer credits), kept by the watchdog like requests.
        var waitingSends: [UInt64: (deadline: BluetoothClock.Instant, waiter: OneShotContinuation)] = [:]
        var subscribers: [UInt16: [NotificationSink]] = [:]
        /// Sinks of every notification and indication, whatever its handle.
        var listeners: [NotificationSink] = []
        var security = LinkSecurity.unencrypted
        /// What the encryption the host started or answered gives the link once the controller
        /// reports it (``expectEncryption(_:)``).
        var expectedSecurity: LinkSecurity?
        /// Signs this client's Signed Write Commands (the host's, from its bond store).
        var signedWriteSigner: SignedWriteSigner?
    }

    /// The connection's handle.
    public let connectionHandle: UInt16
    /// The server half: what the peer asks of this device's GATT server, in the link's order.
    let serverQueue = ATTServerQueue()
    /// The peer, as the controller reported it.
    public let peer: DeviceAddress
    private let state = Mutex(State())
    private let sendFrame: @Sendable (_ pdu: [UInt8], _ completion: HCIController.ACLCompletion?) -> Void
    private let serverInbox: @Sendable (_ pdu: [UInt8], _ bearer: ATTBearer) -> Void
    private let onTransactionTimeout: @Sendable (ATTBearer) -> Void
    private let transactionTimeout: Duration
    private let clock: BluetoothClock
    /// The host's one timer, which keeps the transaction timeout and the callers' deadlines.
    private let watchdog: ATTWatchdog
    let logger: Logger

    /// - Parameters:
    ///   - send: writes an ATT PDU as a B-frame on the ATT channel; the completion runs once
    ///     the controller has it.
    ///   - server: receives the server-bound PDUs (requests, commands, confirmations).
    ///   - onTransactionTimeout: the bearer timed out: the link must go (Vol 3, Part F, 3.3.3).
    ///   - watchdog: the timer shared by the host's bearers (a bearer on its own gets its own).
    init(connectionHandle: UInt16, peer: DeviceAddress, transactionTimeout: Duration = .seconds(30), clock: BluetoothClock = .continuous,
         watchdog: ATTWatchdog? = nil, logger: Logger, send: @escaping @Sendable ([UInt8], HCIController.ACLCompletion?) -> Void,
         server: @escaping @Sendable ([UInt8], ATTBearer) -> Void = { _, _ in },
         onTransactionTimeout: @escaping @Sendable (ATTBearer) -> Void = { _ in }) {
        self.connectionHandle = connectionHandle
        self.peer = peer
        self.transactionTimeout = transactionTimeout
        self.clock = clock
        self.watchdog = watchdog ?? ATTWatchdog(clock: clock)
        self.logger = logger
        sendFrame = send
        serverInbox = server
        self.onTransactionTimeout = onTransactionTimeout
    }

    // MARK: MTU

    /// The bearer's ATT_MTU, shared by both roles (Core 6.0, Vol 3, Part F, 3.4.2): 23 until an
    /// exchange.
    public var mtu: UInt16 { state.withLock { $0.mtu } }

    /// Whether the MTU was exchanged (at most once per bearer, in either role).
    public var hasExchangedMTU: Bool { state.withLock { $0.hasExchangedMTU } }

    // MARK: Security

    /// The link's encryption, as the host last learned it from the controller. The GATT
    /// server checks attribute permissions against it for each request.
    public var security: LinkSecurity { state.withLock { $0.security } }

    /// Sets the link's security (the host, when a pairing's bond is made).
    func setSecurity(_ security: LinkSecurity) {
        state.withLock { $0.security = security }
    }

    /// The host is about to start encryption (LE Enable Encryption) or to answer the
    /// controller's LTK Request with a key: `security` is what the link is worth once the
    /// controller reports it encrypted with that key. Set before the command goes out, so the
    /// event can never come first; `nil` forgets it (the command failed).
    func expectEncryption(_ security: LinkSecurity?) {
        state.withLock { $0.expectedSecurity = security }
    }

    /// Encryption Change or Encryption Key Refresh Complete, on the transport's reader thread
    /// in the controller's order: the ATT PDUs after the event in the same batch are checked
    /// against the new security (a request sent just after encryption is not refused). A
    /// success takes the expected security (with the controller's key size when the event
    /// has one); a key refresh nobody expected keeps what the link had; a failure keeps the
    /// link's security and forgets the expectation. Returns the link's security after it.
    @discardableResult
    func encryptionChanged(success: Bool, enabled: Bool, keySize: Int?) -> LinkSecurity {
        state.withLock { state in
            defer { state.expectedSecurity = nil }
            guard success else { return state.security }
            guard enabled else {
                state.security = .unencrypted
                return state.security
            }
            if var expected = state.expectedSecurity {
                if let keySize { expected.keySize = keySize }
                state.security = expected
            }
            return state.security
        }
    }

    /// The bond with `identity` was removed: a link encrypted with its key is marked so (see
    /// ``LinkSecurity/isBondRemoved``), and an encryption expected with it will be too.
    /// Returns the link's new security when it changed.
    func bondRemoved(_ identity: DeviceAddress) -> LinkSecurity? {
        state.withLock { state in
            if let expected = state.expectedSecurity, let revoked = expected.removingBond(identity) { state.expectedSecurity = revoked }
            guard let revoked = state.security.removingBond(identity) else { return nil }
            state.security = revoked
            return revoked
        }
    }

    /// What signs the client's Signed Write Commands on this bearer; a host gives each of
    /// its bearers one that reads and advances the bond store's SignCounter.
    public var signedWriteSigner: SignedWriteSigner? { state.withLock { $0.signedWriteSigner } }

    /// Sets what signs the client's Signed Write Commands on this bearer.
    public func setSignedWriteSigner(_ signer: SignedWriteSigner?) {
        state.withLock { $0.signedWriteSigner = signer }
    }

    /// Claims the bearer's one MTU exchange; `false` when it happened already.
    func beginMTUExchange() -> Bool {
        state.withLock { state in
            guard !state.hasExchangedMTU else { return false }
            state.hasExchangedMTU = true
            return true
        }
    }

    /// Sets the MTU an exchange agreed on: the smaller of both sides' receive MTUs, at least
    /// 23 and at most 517 (Core 6.0, Vol 3, Part F, 3.4.2.2).
    func setExchangedMTU(clientMTU: UInt16, serverMTU: UInt16) {
        let agreed = Self.agreedMTU(clientMTU: clientMTU, serverMTU: serverMTU)
        state.withLock { state in
            state.hasExchangedMTU = true
            state.mtu = agreed
        }
    }

    static func agreedMTU(clientMTU: UInt16, serverMTU: UInt16) -> UInt16 {
        max(ATTPDU.defaultLEMTU, min(clientMTU, serverMTU, 517))
    }

    // MARK: Client: requests

    /// Sends a request and returns the peer's response, after the requests queued before it
    /// (one is outstanding at a time, Core 6.0, Vol 3, Part F, 3.3.2). An Error Response throws
    /// ``HostError/att(_:)``. Cancelling the calling task makes it throw
    /// ``HostError/cancelled`` at once; the request, if sent, still holds the bearer until its
    /// response comes.
    ///
    /// The task's `RequestScope` bounds the wait: past its deadline, kept by the same watchdog
    /// as the transaction timeout (no timer of its own), the caller gets
    /// ``HostError/deadlineExceeded``; when its abort signal fires, the caller gets the
    /// signal's error at once. Either way the request keeps its place, as for cancellation.
    public func request(_ pdu: ATTPDU) async throws -> ATTPDU {
        let id = makeTransactionID()
        let scope = RequestScope.current
        let registration = scope.abort?.whenAborted { [weak self] error in self?.abandon(id, with: error) }
        defer { if let registration { scope.abort?.remove(registration) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enqueue(id, pdu, ticket: .task(continuation), scope: scope)
            }
        } onCancel: {
            abandon(id, with: HostError.cancelled)
        }
    }

    /// Sends a request as ``request(_:)`` does, for a caller that is not a task: `handler` gets
    /// the response, or the error ``request(_:)`` would throw, once, on the thread that ends
    /// the wait: for a response, the transport's reader thread, so it must be short and must
    /// not block. `scope` bounds the wait as the calling task's does for ``request(_:)``.
    /// This lets the callback API finish a read where its response arrives, with no thread
    /// handoff (`Benchmarks/README.md`).
    public func request(_ pdu: ATTPDU, within scope: RequestScope,
                        handler: @escaping @Sendable (Result<ATTPDU, any Error>) -> Void) {
        let id = makeTransactionID()
        guard let abort = scope.abort else {
            enqueue(id, pdu, ticket: .handler(handler), scope: scope)
            return
        }
        // Registered before the request is queued, so that the ticket, which removes it, can
        // only be resumed after it exists.
        let registration = Mutex<AbortSignal.Registration?>(nil)
        registration.withLock { $0 = abort.whenAborted { [weak self] error in self?.abandon(id, with: error) } }
        enqueue(id, pdu, ticket: .handler { result in
            if let registered = registration.withLock({ $0.take() }) { abort.remove(registered) }
            handler(result)
        }, scope: scope)
    }

    private func makeTransactionID() -> UInt64 {
        state.withLock { state -> UInt64 in
            state.nextTransactionID &+= 1
            return state.nextTransactionID
        }
    }

    /// Queues request `id`, or fails its ticket at once: the bearer closed, the calling task
    /// was cancelled (a task's ticket only: a handler's caller may be a task whose
    /// cancellation is not the request's), or its scope was aborted or is past its deadline.
    private func enqueue(_ id: UInt64, _ pdu: ATTPDU, ticket: Ticket, scope: RequestScope) {
        let outcome = state.withLock { state -> Result<[UInt8]?, any Error> in
            if let closedError = state.closedError { return .failure(closedError) }
            if case .task = ticket, Task.isCancelled { return .failure(HostError.cancelled) }
            if let aborted = scope.abort?.error { return .failure(aborted) }
            if let deadline = scope.deadline, deadline <= clock.now { return .failure(HostError.deadlineExceeded) }
            let ready = state.transactions.enqueue(.init(id: id, request: pdu, ticket: ticket, deadline: scope.deadline))
            let bytes = ready.map { startTransaction($0, state: &state) }
            armWatchdog(&state)
            return .success(bytes)
        }
        switch outcome {
        case let .failure(refusal): ticket.resume(throwing: refusal)
        case let .success(bytes): if let bytes { sendFrame(bytes, nil) }
        }
    }

    /// The caller of request `id` stops waiting, with `error`; the request keeps its place.
    private func abandon(_ id: UInt64, with error: any Error) {
        let ticket = state.withLock { $0.transactions.cancel(id: id) }
        ticket?.resume(throwing: error)
    }

    /// Sends a PDU that gets no response (a command, a confirmation, a notification);
    /// returns once the controller has taken it under its buffer credits. The task's
    /// `RequestScope` bounds the wait for credits: past its deadline the caller gets
    /// ``HostError/deadlineExceeded``, when its abort signal fires the signal's error, and the
    /// caller's cancellation gives ``HostError/cancelled``, each at once (the PDU still goes out
    /// in its turn).
    public func send(_ pdu: ATTPDU) async throws {
        if let closedError = state.withLock({ $0.closedError }) { throw closedError }
        let scope = RequestScope.current
        let bytes = pdu.encode()
        let waiter = OneShotContinuation()
        let registration = scope.abort?.whenAborted { error in waiter.resume(with: .failure(error)) }
        defer { if let registration { scope.abort?.remove(registration) } }
        let id = makeTransactionID()
        defer {
            state.withLock { state in
                guard state.waitingSends.removeValue(forKey: id) != nil else { return }
                armWatchdog(&state)
            }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                waiter.set(continuation)
                if registration == nil, let error = scope.abort?.error {
                    waiter.resume(with: .failure(error))
                    return
                }
                if let deadline = scope.deadline {
                    guard deadline > clock.now else {
                        waiter.resume(with: .failure(HostError.deadlineExceeded))
                        return
                    }
                    state.withLock { state in
                        state.waitingSends[id] = (deadline, waiter)
                        armWatchdog(&state)
                    }
                }
                sendFrame(bytes) { result in waiter.resume(with: result.mapError { HostError.wrap($0) as any Error }) }
            }
        } onCancel: {
            waiter.resume(with: .failure(HostError.cancelled))
        }
    }

    /// Sends PDU bytes without waiting (the server's responses, notifications, indications).
    /// Nothing goes out once the bearer has closed, and `completion` hears so: its link has
    /// ended (HCI names a link only by its handle, which the next link may hold already), or
    /// it timed out and carries no more (Core 6.0, Vol 3, Part F, 3.3.3).
    func send(_ bytes: [UInt8], completion: HCIController.ACLCompletion? = nil) {
        guard closedError == nil else {
            completion?(.failure(.connectionClosed(connectionHandle: connectionHandle)))
            return
        }
        sendFrame(bytes, completion)
    }

    /// Whether requests can still go out, and why not.
    var closedError: HostError? { state.withLock { $0.closedError } }

    /// Marks `transaction` outstanding and returns its bytes, to send once the lock is released.
    private func startTransaction(_ transaction: ATTTransactionQueue<Ticket>.Transaction, state: inout State) -> [UInt8] {
        state.outstandingSince = clock.now
        return transaction.request.encode()
    }

    /// When the watchdog must look next: the outstanding request's transaction timeout or a
    /// caller's deadline, whichever comes first.
    private func nextWake(_ state: State) -> BluetoothClock.Instant? {
        guard state.closedError == nil else { return nil }
        let timeout = state.transactions.outstanding != nil ? state.outstandingSince.map { $0 + transactionTimeout } : nil
        func earliest(_ first: BluetoothClock.Instant?, _ second: BluetoothClock.Instant?) -> BluetoothClock.Instant? {
            guard let first, let second else { return first ?? second }
            return min(first, second)
        }
        return earliest(earliest(timeout, state.transactions.earliestDeadline), state.waitingSends.values.lazy.map(\.deadline).min())
    }

    /// Tells the watchdog when this bearer next needs a look. Called with the state locked,
    /// so that the watchdog always has the latest.
    private func armWatchdog(_ state: inout State) {
        watchdog.schedule(self, at: nextWake(state))
    }

    /// The watchdog's look: lets go of the callers past their deadline, and closes the bearer
    /// if the outstanding request is past its transaction timeout.
    func watchdogDidWake(at now: BluetoothClock.Instant) {
        var lateSends: [OneShotContinuation] = []
        let (late, expired) = state.withLock {
            state -> ([Ticket], (tickets: [Ticket], sinks: [NotificationSink], request: ATTOpcode?)?) in
            let late = state.transactions.expireDeadlines(at: now)
            for (id, send) in state.waitingSends where send.deadline <= now {
                state.waitingSends[id] = nil
                lateSends.append(send.waiter)
            }
            if state.closedError == nil, let since = state.outstandingSince, state.transactions.outstanding != nil,
               now >= since + transactionTimeout {
                let request = state.transactions.outstanding?.request.opcode
                state.closedError = .attBearerClosed
                armWatchdog(&state)
                return (late, (state.transactions.removeAll(), Self.removeSinks(&state), request))
            }
            armWatchdog(&state)
            return (late, nil)
        }
        late.forEach { $0.resume(throwing: HostError.deadlineExceeded) }
        lateSends.forEach { $0.resume(with: .failure(HostError.deadlineExceeded)) }
        guard let expired else { return }
        // No response within the transaction timeout: the bearer is unusable
        // (Core 6.0, Vol 3, Part F, 3.3.3), so it closes and the link is dropped.
        logger.error("ATT transaction timeout waiting for \(expired.request.map { "\($0)" } ?? "?")")
        expired.tickets.forEach { $0.resume(throwing: HostError.attTransactionTimeout) }
        expired.sinks.forEach { $0.finish(.attTransactionTimeout) }
        onTransactionTimeout(self)
    }

    // MARK: Client: notifications and indications

    /// Adds a sink for the values notified or indicated on `valueHandle`.
    func addSubscriber(_ sink: NotificationSink, valueHandle: UInt16) throws(HostError) {
        try state.withLock { state throws(HostError) in
            if let closedError = state.closedError { throw closedError }
            state.subscribers[valueHandle, default: []].append(sink)
        }
    }

    /// Removes a sink; returns how many sinks the value handle has left.
    @discardableResult
    func removeSubscriber(_ sink: NotificationSink, valueHandle: UInt16) -> Int {
        state.withLock { state in
            state.subscribers[valueHandle]?.removeAll { $0 === sink }
            let left = state.subscribers[valueHandle]?.count ?? 0
            if left == 0 { state.subscribers[valueHandle] = nil }
            return left
        }
    }

    /// How many sinks the value handle has.
    func subscriberCount(valueHandle: UInt16) -> Int {
        state.withLock { $0.subscribers[valueHandle]?.count ?? 0 }
    }

    /// Removes every sink of the value handle and returns them.
    func removeSubscribers(valueHandle: UInt16) -> [NotificationSink] {
        state.withLock { $0.subscribers.removeValue(forKey: valueHandle) ?? [] }
    }

    /// Adds a sink for every notification and indication.
    func addListener(_ sink: NotificationSink) throws(HostError) {
        try state.withLock { state throws(HostError) in
            if let closedError = state.closedError { throw closedError }
            state.listeners.append(sink)
        }
    }

    func removeListener(_ sink: NotificationSink) {
        state.withLock { $0.listeners.removeAll { $0 === sink } }
    }

    // MARK: Receiving (the transport's reader thread)

    /// An ATT PDU from the peer. Client-bound ones are handled here; the others go to the
    /// GATT server. Values for sinks are added to `deliveries`, which the caller flushes
    /// once the transport's batch is done. Returns whether the PDU was a value the server
    /// pushed unasked (a notification or an indication).
    @discardableResult
    func receive(_ pdu: ArraySlice<UInt8>, deliveries: inout NotificationDeliveries) -> Bool {
        guard let opcode = pdu.first else { return false }
        switch opcode {
        case ATTOpcode.handleValueNotification.rawValue:
            // The hot path, decoded in place: opcode, handle, value (Vol 3, Part F, 3.4.7.1).
            guard let handle = ByteReader.uint16(in: pdu, at: 1) else { return dropMalformed(pdu) }
            guard route(handle: handle, value: pdu[(pdu.startIndex + 3)...], isIndication: false, size: pdu.count,
                        deliveries: &deliveries) else { return dropOversized(pdu) }
        case ATTOpcode.handleValueIndication.rawValue:
            guard let handle = ByteReader.uint16(in: pdu, at: 1) else { return dropMalformed(pdu) }
            guard route(handle: handle, value: pdu[(pdu.startIndex + 3)...], isIndication: true, size: pdu.count,
                        deliveries: &deliveries) else { return dropOversized(pdu) }
            // The server sends no other indication until this confirmation (Vol 3, Part F, 3.4.7.2).
            confirmIndication()
        case ATTOpcode.multipleHandleValueNotification.rawValue:
            guard pdu.count <= Int(mtu) else { return dropOversized(pdu) }
            guard case let .multipleHandleValueNotification(notifications)? = try? ATTPDU.decode(Array(pdu)) else { return dropMalformed(pdu) }
            for entry in notifications.values {
                route(handle: entry.handle, value: entry.value[...], isIndication: false, size: 0, deliveries: &deliveries)
            }
        default:
            switch ATTOpcode(rawValue: opcode).kind {
            case .response?:
                // The values the batch holds so far go out first: a response may be reported
                // from here (a handler's ticket), and must not overtake the notifications the
                // peer sent before it.
                deliveries.flushPending()
                receiveResponse(pdu)
            default:
                serverInbox(Array(pdu), self)
            }
            return false
        }
        return true
    }

    /// Whether a request of this device's client waits for its response or its turn.
    var isAwaitingResponse: Bool { state.withLock { !$0.transactions.isIdle } }

    /// Hands a pushed value to its sinks; `false` (nothing delivered) when the PDU of `size`
    /// octets is larger than the bearer's MTU.
    @discardableResult
    private func route(handle: UInt16, value: ArraySlice<UInt8>, isIndication: Bool, size: Int, deliveries: inout NotificationDeliveries) -> Bool {
        let sinks = state.withLock { state -> (subscribers: [NotificationSink], listeners: [NotificationSink])? in
            guard size <= Int(state.mtu) else { return nil }
            return (state.subscribers[handle] ?? [], state.listeners)
        }
        guard let sinks else { return false }
        for sink in sinks.subscribers { deliveries.add(GATTValue(handle: handle, value: value, isIndication: isIndication), to: sink) }
        for sink in sinks.listeners { deliveries.add(GATTValue(handle: handle, value: value, isIndication: isIndication), to: sink) }
        return true
    }

    private func confirmIndication() {
        let open = state.withLock { $0.closedError == nil }
        if open { sendFrame(ATTPDU.handleValueConfirmation(.init()).encode(), nil) }
    }

    private func receiveResponse(_ bytes: ArraySlice<UInt8>) {
        // No PDU may exceed ATT_MTU (Core 6.0, Vol 3, Part F, 3.2.8): a larger response is the
        // peer's error, not a value to hand on; it ends the request it answers.
        let mtu = Int(self.mtu)
        guard bytes.count <= mtu else {
            logger.warning("ATT \(ATTOpcode(rawValue: bytes.first ?? 0)) of \(bytes.count) octets exceeds ATT_MTU \(mtu); dropped")
            failOutstanding(answeredBy: bytes.first, error: .protocolViolation("ATT response of \(bytes.count) octets exceeds ATT_MTU \(mtu)"))
            return
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU.decode(Array(bytes))
        } catch {
            logger.warning("malformed ATT response dropped: \(error)")
            // It still ends the outstanding transaction when its opcode is the one expected,
            // so that the bearer does not stall until the timeout.
            failOutstanding(answeredBy: bytes.first, error: .protocolViolation("malformed ATT response: \(error)"))
            return
        }
        let (answered, next) = state.withLock { state -> (ATTTransactionQueue<Ticket>.Transaction?, [UInt8]?) in
            guard let (answered, next) = state.transactions.receive(pdu) else { return (nil, nil) }
            state.outstandingSince = nil
            // The agreed MTU applies from this response on: the server may send PDUs of that
            // size right behind it, before the exchange's caller runs again.
            if case let .exchangeMTUResponse(response) = pdu, case let .exchangeMTURequest(request) = answered.request {
                state.hasExchangedMTU = true
                state.mtu = Self.agreedMTU(clientMTU: request.clientRxMTU, serverMTU: response.serverRxMTU)
            }
            let bytes = next.map { startTransaction($0, state: &state) }
            armWatchdog(&state)
            return (answered, bytes)
        }
        if let next { sendFrame(next, nil) }
        guard let answered else {
            logger.warning("unexpected ATT \(pdu.opcode) dropped (no matching request)")
            return
        }
        if case let .errorResponse(error) = pdu {
            answered.ticket?.resume(throwing: HostError.att(ATTError(error)))
        } else {
            answered.ticket?.resume(returning: pdu)
        }
    }

    private func failOutstanding(answeredBy opcodeByte: UInt8?, error: HostError) {
        guard let opcodeByte else { return }
        let opcode = ATTOpcode(rawValue: opcodeByte)
        let (answered, next) = state.withLock { state -> (ATTTransactionQueue<Ticket>.Transaction?, [UInt8]?) in
            guard let current = state.transactions.outstanding,
                  opcode == current.request.expectedResponseOpcode || opcode == .errorResponse,
                  let (answered, next) = state.transactions.finishOutstanding() else { return (nil, nil) }
            state.outstandingSince = nil
            let bytes = next.map { startTransaction($0, state: &state) }
            armWatchdog(&state)
            return (answered, bytes)
        }
        if let next { sendFrame(next, nil) }
        answered?.ticket?.resume(throwing: error)
    }

    /// Drops a pushed value larger than ATT_MTU (Core 6.0, Vol 3, Part F, 3.2.8); an
    /// indication is still confirmed, or the server could send no other. Returns `false`.
    private func dropOversized(_ pdu: ArraySlice<UInt8>) -> Bool {
        logger.warning("ATT \(ATTOpcode(rawValue: pdu.first ?? 0)) of \(pdu.count) octets exceeds ATT_MTU \(mtu); dropped")
        if pdu.first == ATTOpcode.handleValueIndication.rawValue { confirmIndication() }
        return false
    }

    /// Drops a malformed pushed value; returns `false` (it is not counted as one).
    private func dropMalformed(_ pdu: ArraySlice<UInt8>) -> Bool {
        logger.warning("malformed ATT \(ATTOpcode(rawValue: pdu.first ?? 0)) dropped [\(Hex.encode(pdu, separator: " "))]")
        // Even a malformed indication is confirmed, or the server could send no other
        // (Core 6.0, Vol 3, Part F, 3.4.7.2).
        if pdu.first == ATTOpcode.handleValueIndication.rawValue { confirmIndication() }
        return false
    }

    // MARK: Closing

    /// The link is gone (or the transport): every pending and later request fails with
    /// `error`, every sink ends with it, and the server serves the link no more.
    func close(with error: HostError) {
        let closed = state.withLock { state -> (tickets: [Ticket], sinks: [NotificationSink])? in
            guard state.closedError == nil || state.closedError == .attBearerClosed else { return nil }
            state.closedError = error
            armWatchdog(&state)
            return (state.transactions.removeAll(), Self.removeSinks(&state))
        }
        serverQueue.finish()
        guard let closed else { return }
        closed.tickets.forEach { $0.resume(throwing: error) }
        closed.sinks.forEach { $0.finish(error) }
    }

    private static func removeSinks(_ state: inout State) -> [NotificationSink] {
        defer {
            state.subscribers.removeAll()
            state.listeners.removeAll()
        }
        return state.subscribers.values.flatMap { $0 } + state.listeners
    }
}
