#if canImport(Glibc)
import Synchronization

/// A signal stream's place in the connection: its rule and where its signals go.
struct SignalSubscription {
    var rule: DBusMatchRule
    var continuation: AsyncThrowingStream<DBusMessage, any Error>.Continuation
    var bufferLimit: Int
    var dropped = 0
}

/// Signal subscriptions: each stream has its own match rule, added to the bus (AddMatch) while
/// the stream lives and removed (RemoveMatch) when its consumer stops. The bus sends the
/// connection what matches any of its rules; each stream keeps what matches its own.
extension DBusConnectionCore {
    func subscribe(_ rule: DBusMatchRule, bufferLimit: Int) async throws(DBusError) -> DBusSignalStream {
        try rule.validate()
        let followed = options.isBus ? rule.followedSender : nil
        if let followed { try await follow(followed) }
        let bufferLimit = max(1, bufferLimit)
        let (stream, continuation) = AsyncThrowingStream<DBusMessage, any Error>.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
        let identifier: UInt64
        do throws(DBusError) {
            identifier = try state.withLock { state throws(DBusError) -> UInt64 in
                if let reason = state.closeReason { throw reason }
                let identifier = state.makeIdentifier()
                state.subscriptions[identifier] = SignalSubscription(rule: rule, continuation: continuation, bufferLimit: bufferLimit)
                return identifier
            }
        } catch {
            if let followed { unfollow(followed) }
            throw error
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(identifier) }
        if options.isBus {
            do throws(DBusError) {
                try await busCall("AddMatch", [.string(rule.description)])
            } catch {
                // Removed before finishing, so that onTermination sends no RemoveMatch.
                state.withLock { _ = $0.subscriptions.removeValue(forKey: identifier) }
                continuation.finish()
                if let followed { unfollow(followed) }
                throw error
            }
        }
        return DBusSignalStream(stream)
    }

    /// The consumer stopped (or the stream ended): forget the subscription and remove its rule
    /// from the bus. Sends without waiting, from whatever thread ends the stream.
    func unsubscribe(_ identifier: UInt64) {
        guard let subscription = state.withLock({ $0.subscriptions.removeValue(forKey: identifier) }) else { return }
        guard options.isBus, closeReason == nil else { return }
        try? sendToBus("RemoveMatch", [.string(subscription.rule.description)])
        if let followed = subscription.rule.followedSender { unfollow(followed) }
    }

    /// How many signal streams are open (for tests and diagnostics).
    var subscriptionCount: Int { state.withLock { $0.subscriptions.count } }

    /// A signal (channel thread): follows name owners, then yields it to every stream whose rule
    /// matches.
    func deliverSignal(_ message: DBusMessage) {
        let targets = state.withLock { state -> [(UInt64, AsyncThrowingStream<DBusMessage, any Error>.Continuation)] in
            if message.sender == DBusNames.bus, message.interface == DBusNames.bus, message.member == "NameOwnerChanged",
               message.body.count == 3, let name = message.body[0].stringValue, let owner = message.body[2].stringValue,
               state.followedNames[name] != nil {
                state.followedNames[name]?.owner = owner.isEmpty ? nil : owner
            }
            var targets: [(UInt64, AsyncThrowingStream<DBusMessage, any Error>.Continuation)] = []
            for (identifier, subscription) in state.subscriptions {
                let owner: String?
                if let followed = subscription.rule.followedSender {
                    owner = options.isBus ? state.followedNames[followed]?.owner : followed
                } else {
                    owner = nil
                }
                if subscription.rule.matches(message, senderOwner: owner) { targets.append((identifier, subscription.continuation)) }
            }
            return targets
        }
        for (identifier, continuation) in targets {
            guard case .dropped = continuation.yield(message) else { continue }
            let first = state.withLock { state -> SignalSubscription? in
                state.subscriptions[identifier]?.dropped += 1
                return state.subscriptions[identifier].flatMap { $0.dropped == 1 ? $0 : nil }
            }
            if let first {
                logger.warning("a D-Bus signal stream is not read fast enough: its oldest signals are dropped (\(first.bufferLimit) kept; rule \(first.rule))")
            }
        }
    }

    // MARK: - Following well-known names

    /// Starts following `name`'s owner (NameOwnerChanged, then GetNameOwner) for a stream whose
    /// rule names it as sender; returns once the owner is known.
    private func follow(_ name: String) async throws(DBusError) {
        let isFirst = state.withLock { state in
            state.followedNames[name, default: FollowedName()].subscribers += 1
            return state.followedNames[name]?.subscribers == 1
        }
        guard isFirst else {
            // Another stream asked first: wait until the owner it asked for is known.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    guard let followed = state.followedNames[name], !followed.isKnown else { return true }
                    state.followedNames[name]?.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
            return
        }
        do throws(DBusError) {
            try await busCall("AddMatch", [.string(Self.ownerRule(name).description)])
            // Applied on the channel's thread when it arrives: NameOwnerChanged signals before it
            // are older than the answer, those after it newer.
            let owner = try await withCheckedContinuation { (continuation: CheckedContinuation<Result<String?, DBusError>, Never>) in
                do throws(DBusError) {
                    let message = DBusMessage.methodCall(destination: DBusNames.bus, path: .bus, interface: DBusNames.bus, member: "GetNameOwner",
                                                         body: [.string(name)])
                    try startCall(message, timeout: options.callTimeout) { [self] result in
                        switch result {
                        case let .success(reply):
                            let owner = reply.body.first?.stringValue
                            markKnown(name, owner: owner)
                            continuation.resume(returning: .success(owner))
                        case .failure(.errorReply(name: .nameHasNoOwner, _)):
                            markKnown(name, owner: nil)
                            continuation.resume(returning: .success(nil))
                        case let .failure(error):
                            continuation.resume(returning: .failure(error))
                        }
                    }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }.get()
            logger.debug("following \(name): owned by \(owner ?? "nobody")")
        } catch {
            markKnown(name, owner: nil)
            unfollow(name)
            throw error
        }
    }

    /// The owner of a followed name is known: streams waiting for it go on.
    private func markKnown(_ name: String, owner: String?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.followedNames[name] != nil else { return [] }
            state.followedNames[name]?.owner = owner
            state.followedNames[name]?.isKnown = true
            defer { state.followedNames[name]?.waiters = [] }
            return state.followedNames[name]?.waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    private func unfollow(_ name: String) {
        let isLast = state.withLock { state -> Bool in
            guard let followed = state.followedNames[name] else { return false }
            if followed.subscribers <= 1 {
                state.followedNames[name] = nil
                return true
            }
            state.followedNames[name]?.subscribers -= 1
            return false
        }
        if isLast { try? sendToBus("RemoveMatch", [.string(Self.ownerRule(name).description)]) }
    }

    static func ownerRule(_ name: String) -> DBusMatchRule {
        DBusMatchRule(sender: DBusNames.bus, interface: DBusNames.bus, member: "NameOwnerChanged", path: .bus, arguments: [0: name])
    }

    // MARK: - The bus's methods

    /// Calls a method of the bus (org.freedesktop.DBus) and returns the answer's arguments.
    @discardableResult
    func busCall(_ member: String, _ arguments: [DBusValue], timeout: Duration? = nil) async throws(DBusError) -> [DBusValue] {
        let message = DBusMessage.methodCall(destination: DBusNames.bus, path: .bus, interface: DBusNames.bus, member: member, body: arguments)
        return try await call(message, timeout: timeout ?? options.callTimeout).body
    }

    /// Sends a call to the bus that wants no answer.
    func sendToBus(_ member: String, _ arguments: [DBusValue]) throws(DBusError) {
        try send(.methodCall(destination: DBusNames.bus, path: .bus, interface: DBusNames.bus, member: member, body: arguments, flags: .noReplyExpected))
    }
}
#endif
