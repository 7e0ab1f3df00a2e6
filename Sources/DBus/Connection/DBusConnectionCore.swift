#if canImport(Glibc)
import Glibc
import Logging
import Synchronization

/// What a ``DBusConnection`` is made of: the channel, and the bookkeeping of calls waiting for
/// answers, signal subscriptions and exported objects, under one lock. The channel's thread
/// hands it each message (``receive(_:)``); nothing here blocks that thread: answers resume
/// their callers, signals are yielded to bounded streams, calls to exported objects run in
/// tasks of their own.
///
/// The public ``DBusConnection`` is a handle on it, so that dropping the last handle closes the
/// connection even while streams and the channel's thread still refer to the core.
final class DBusConnectionCore: Sendable {
    let options: DBusConnection.Options
    let channel: DBusChannel
    let state = Mutex(State())
    var logger: Logger { options.logger }

    struct State {
        var nextSerial: UInt32 = 1
        var pending: [UInt32: PendingCall] = [:]
        var subscriptions: [UInt64: SignalSubscription] = [:]
        var nextIdentifier: UInt64 = 1
        /// Well-known sender names of subscriptions, and their owners.
        var followedNames: [String: FollowedName] = [:]
        var objects = DBusObjectTree()
        var incomingCalls: [UInt64: Task<Void, Never>] = [:]
        /// The last call without a reply from each sender to each object, which the next one
        /// from the same sender to the same object waits for (see `handleIncomingCall`).
        var unansweredChains: [String: (identifier: UInt64, task: Task<Void, Never>)] = [:]
        var closeReason: DBusError?
        var uniqueName: String?
        var serverGUID = ""
        var canPassFileDescriptors = false

        mutating func makeIdentifier() -> UInt64 {
            defer { nextIdentifier += 1 }
            return nextIdentifier
        }

        /// The next serial not in use: never 0, and never one still waiting for its answer.
        mutating func makeSerial() -> UInt32 {
            while true {
                let serial = nextSerial
                nextSerial = nextSerial == .max ? 1 : nextSerial + 1
                if pending[serial] == nil { return serial }
            }
        }
    }

    /// A call waiting for its answer: whom to tell, and the timer that gives up.
    struct PendingCall {
        var resolve: @Sendable (Result<DBusMessage, DBusError>) -> Void
        var timer: Task<Void, Never>?
    }

    struct FollowedName {
        var subscribers = 0
        var owner: String?
        /// Whether GetNameOwner has answered; streams that follow the name wait until then.
        var isKnown = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    init(options: DBusConnection.Options) throws(DBusError) {
        self.options = options
        channel = try DBusChannel(limits: DBusChannel.Limits(
            maximumMessageLength: min(options.maximumMessageLength, DBusMessage.maximumLength), maximumQueuedBytes: options.maximumQueuedBytes
        ))
    }

    // MARK: - Opening and closing

    func open(_ addresses: [DBusAddress]) async throws(DBusError) {
        let clock = ContinuousClock()
        let start = clock.now
        let handshake = try await channel.open(
            addresses, uid: UInt32(getuid()), negotiateUnixFileDescriptors: options.negotiateUnixFileDescriptors,
            timeout: options.connectTimeout, receiver: { [self] event in receive(event) }
        )
        state.withLock { state in
            state.serverGUID = handshake.guid
            state.canPassFileDescriptors = handshake.unixFileDescriptors
        }
        guard options.isBus else { return }
        do throws(DBusError) {
            let left = max(options.connectTimeout - start.duration(to: clock.now), .milliseconds(1))
            let reply = try await call(.methodCall(destination: DBusNames.bus, path: .bus, interface: DBusNames.bus, member: "Hello"), timeout: left)
            guard let name = reply.body.first?.stringValue else {
                throw DBusError.unexpectedReply("Hello answered \"\(reply.body.map(\.type.description).joined())\", not a unique name")
            }
            state.withLock { $0.uniqueName = name }
        } catch {
            close(error)
            throw error
        }
    }

    var uniqueName: String? { state.withLock { $0.uniqueName } }
    var serverGUID: String { state.withLock { $0.serverGUID } }
    var canPassFileDescriptors: Bool { state.withLock { $0.canPassFileDescriptors } }
    var closeReason: DBusError? { state.withLock { $0.closeReason } }

    func close(_ reason: DBusError) {
        channel.close(reason)
        shutDown(reason)
    }

    /// Fails what waits, ends the streams, cancels the handlers. Idempotent.
    private func shutDown(_ reason: DBusError) {
        let closed: DBusError
        if case .connectionClosed = reason { closed = reason } else { closed = .connectionClosed(reason: reason.description) }
        let (pending, subscriptions, handlers, waiters) = state.withLock { state in
            if state.closeReason == nil { state.closeReason = closed }
            defer {
                state.pending = [:]
                state.subscriptions = [:]
                state.incomingCalls = [:]
                state.unansweredChains = [:]
                state.followedNames = [:]
            }
            return (state.pending, state.subscriptions, state.incomingCalls, state.followedNames.values.flatMap(\.waiters))
        }
        for waiter in waiters { waiter.resume() }
        for call in pending.values {
            call.timer?.cancel()
            call.resolve(.failure(closed))
        }
        for subscription in subscriptions.values { subscription.continuation.finish(throwing: closed) }
        for handler in handlers.values { handler.cancel() }
    }

    // MARK: - Receiving (on the channel's thread)

    func receive(_ event: DBusChannel.Event) {
        switch event {
        case let .message(message):
            switch message.kind {
            case .methodReturn, .error: resolveReply(message)
            case .signal: deliverSignal(message)
            case .methodCall: handleIncomingCall(message)
            default: logger.debug("ignoring a D-Bus message of unknown type \(message.kind.rawValue)")
            }
        case let .closed(reason):
            if case .protocolViolation = reason { logger.warning("D-Bus connection closed: \(reason)") }
            shutDown(reason)
        }
    }

    // MARK: - Sending

    /// Gives `message` a serial, encodes and sends it; returns the serial.
    @discardableResult
    func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
        var message = message
        let serial = try state.withLock { state throws(DBusError) -> UInt32 in
            if let reason = state.closeReason { throw reason }
            return state.makeSerial()
        }
        message.serial = serial
        try channel.send(try encode(message))
        return serial
    }

    func encode(_ message: DBusMessage) throws(DBusError) -> DBusEncodedMessage {
        do throws(DBusWireError) {
            return try message.encode()
        } catch {
            throw .invalidMessage(error)
        }
    }
}
#endif
