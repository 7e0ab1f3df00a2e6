import BluetoothHost
import Foundation

extension Bluejay {
    /// Turns on notifications (or indications) of a characteristic and calls `completion`
    /// with each value, on the callback queue, until ``endListen(to:timeout:completion:)``. A failure
    /// to set the listen up, and values `R` cannot be made from, come as `.failure`.
    ///
    /// `multipleListenOption` says what a later listen on the same characteristic does:
    /// ``MultipleListenOption/trap`` refuses it, ``MultipleListenOption/replaceable`` gives way
    /// to it, ``MultipleListenOption/shared`` lets it join (each listener gets every value; the
    /// notifications go off when the last ends). After an auto-reconnect the listen is enabled
    /// again.
    ///
    /// Returns a token that ends just this listener (``endListen(_:completion:)``);
    /// ``endListen(to:timeout:completion:)`` ends every listener of the characteristic.
    @discardableResult
    public func listen<R: Receivable>(to characteristic: CharacteristicIdentifier, multipleListenOption: MultipleListenOption = .trap,
                                      completion: @escaping @Sendable (ReadResult<R>) -> Void) -> ListenToken {
        listen(to: characteristic, multipleListenOption: multipleListenOption, setUpTimeout: nil, completion: completion)
    }

    /// ``listen(to:multipleListenOption:completion:)`` with a time limit of its own for turning
    /// the notifications on, in place of the operation time limit (``Timeout/none``: none).
    @discardableResult
    public func listen<R: Receivable>(to characteristic: CharacteristicIdentifier, multipleListenOption: MultipleListenOption = .trap,
                                      timeout: Timeout, completion: @escaping @Sendable (ReadResult<R>) -> Void) -> ListenToken {
        listen(to: characteristic, multipleListenOption: multipleListenOption, setUpTimeout: timeout, completion: completion)
    }

    private func listen<R: Receivable>(to characteristic: CharacteristicIdentifier, multipleListenOption: MultipleListenOption,
                                       setUpTimeout timeout: Timeout?, completion: @escaping @Sendable (ReadResult<R>) -> Void) -> ListenToken {
        let queue = state.withLock { $0.callbackQueue }
        let handler: ListenHandler = { result in queue.async { completion(result.decoded()) } }
        // The values of one transport batch reach the callback queue in one hop.
        let batchHandler: ListenBatchHandler = { values in
            queue.async { for value in values { completion(Result<Data, BluejayError>.success(value).decoded()) } }
        }
        if let refusal = refusal(for: "listen") {
            handler(.failure(refusal))
            return ListenToken(characteristic: characteristic, id: 0)
        }
        let id = installListen(on: characteristic, handler: handler, batchHandler: batchHandler, option: multipleListenOption,
                               synchronous: false, timeout: timeout) { _ in }
        return ListenToken(characteristic: characteristic, id: id ?? 0)
    }

    /// Ends one listener (the one `token` was returned for): its callback gets no more values.
    /// When it was the characteristic's last listener, the notifications are turned off (queued,
    /// like ``endListen(to:timeout:completion:)``); otherwise `completion` gets success at once. A
    /// listener that has ended already is left alone.
    public func endListen(_ token: ListenToken, completion: (@Sendable (WriteResult) -> Void)? = nil) {
        let deliver = onCallbackQueue { (result: WriteResult) in completion?(result) }
        if let refusal = refusal(for: "endListen") {
            deliver(.failure(refusal))
            return
        }
        removeListen(on: token.characteristic, listener: token.id, privileged: false, deliver: deliver)
    }

    /// Turns the notifications of a characteristic off and removes its listen callbacks (all of
    /// them, when several share it).
    /// Values arriving after this call are dropped.
    /// `timeout` limits turning the notifications off, in place of the operation time limit.
    public func endListen(to characteristic: CharacteristicIdentifier, timeout: Timeout? = nil, completion: (@Sendable (WriteResult) -> Void)? = nil) {
        let deliver = onCallbackQueue { (result: WriteResult) in completion?(result) }
        if let refusal = refusal(for: "endListen") {
            deliver(.failure(refusal))
            return
        }
        removeListen(on: characteristic, privileged: false, timeout: timeout, deliver: deliver)
    }

    /// Whether a listen is installed (or being installed) on the characteristic.
    public func isListening(to characteristic: CharacteristicIdentifier) -> Bool {
        state.withLock { $0.listens.contains(characteristic) }
    }

    // MARK: Shared with the synchronous and async APIs

    /// Registers a listen and queues the enabling of its notifications (which a listener that
    /// joins finds on already). `installed` gets the outcome of the set-up (the handler gets
    /// set-up failures too). Returns the listener's identifier, `nil` if it was trapped.
    @discardableResult
    func installListen(on characteristic: CharacteristicIdentifier, handler: @escaping ListenHandler, batchHandler: ListenBatchHandler? = nil,
                       option: MultipleListenOption, synchronous: Bool, onRemoval: (@Sendable () -> Void)? = nil, operationID: UInt64? = nil,
                       timeout: Timeout? = nil, installed: @escaping @Sendable (Result<Void, BluejayError>) -> Void) -> UInt64? {
        let admission = state.withLock {
            $0.listens.admit(characteristic, handler: handler, batchHandler: batchHandler, option: option, synchronous: synchronous,
                             onRemoval: onRemoval)
        }
        let listener: UInt64
        switch admission {
        case .trapped:
            handler(.failure(.multipleListenTrapped(characteristic)))
            installed(.failure(.multipleListenTrapped(characteristic)))
            return nil
        case let .replaced(previous, id):
            if !previous.isEmpty { log(.info, "the listen on \(characteristic) was replaced") }
            previous.forEach { $0.end(with: .multipleListenReplaced(characteristic)) }
            listener = id
        case let .joined(id):
            log(.info, "another listener joined the listen on \(characteristic)")
            listener = id
        case let .installed(id):
            listener = id
        }
        submitGATT("listen to \(characteristic)", privileged: synchronous, id: operationID, timeout: timeout, work: { [self] link in
            try await self.enableNotifications(of: characteristic, on: link, listener: listener)
        }, deliver: { [self] result in
            if case let .failure(error) = result {
                let removal = self.state.withLock { $0.listens.remove(characteristic, listener: listener) }
                removal?.record?.subscription?.cancel()
                removal?.listeners.forEach { $0.end(with: error) }
            } else {
                self.saveCurrentRestorationState()
            }
            installed(result)
        })
        return listener
    }

    /// Removes the listen (with `listener`, that one listener) at once and, when no listener
    /// is left, queues turning its notifications off.
    func removeListen(on characteristic: CharacteristicIdentifier, listener: UInt64? = nil, privileged: Bool, operationID: UInt64? = nil,
                      timeout: Timeout? = nil, deliver: @escaping @Sendable (WriteResult) -> Void) {
        let removal = state.withLock { $0.listens.remove(characteristic, listener: listener) }
        removal?.listeners.forEach { $0.onRemoval?() }
        if listener != nil, removal?.record == nil {
            // Other listeners remain, or a newer listen took its place: leave them alone.
            deliver(.success(()))
            return
        }
        removal?.record?.subscription?.cancel()
        saveCurrentRestorationState()
        submitGATT("end listen to \(characteristic)", privileged: privileged, id: operationID, timeout: timeout, work: { link in
            try await link.unsubscribe(characteristic)
        }, deliver: deliver)
    }

    /// Enables the notifications of a listed listen, unless they are on already, and
    /// forwards its values.
    func enableNotifications(of characteristic: CharacteristicIdentifier, on link: PeripheralLink, listener: UInt64?) async throws {
        let needed = state.withLock { state -> Bool in
            guard let record = state.listens.record(for: characteristic) else { return false }
            if let listener, !state.listens.contains(characteristic, listener: listener) { return false }
            return !record.isSubscribed
        }
        guard needed else { return }
        // The values come on the transport's reader thread, one call per batch: the one copy
        // from the receive buffer is into their Data. (A dropped link ends the subscription;
        // the disconnection is handled elsewhere.)
        let subscription = try await link.subscribe(characteristic) { [weak self] values in
            self?.didReceive(values.map { Data($0.value) }, on: characteristic, from: link)
        }
        let kept = state.withLock { state -> Bool in
            guard state.link.link === link, state.listens.record(for: characteristic) != nil else { return false }
            state.listens.setSubscribed(characteristic, subscription: subscription)
            return true
        }
        if !kept {
            // Ended while being set up: turn it off again.
            subscription.cancel()
            try? await link.unsubscribe(characteristic)
        }
    }

    /// Enables the listens that are not on (after a reconnection or restoration).
    func resubscribeListens(on link: PeripheralLink) async {
        let characteristics = state.withLock { $0.listens.toResubscribe }
        for characteristic in characteristics {
            do {
                try await withTimeLimit(operationTimeLimit, clock: clock, operation: "listen to \(characteristic)") {
                    try await self.enableNotifications(of: characteristic, on: link, listener: nil)
                }
                log(.info, "listen on \(characteristic) enabled again")
            } catch {
                let failure = BluejayError(error, peripheral: link.identifier, operation: "listen to \(characteristic)")
                log(.warning, "listen on \(characteristic) could not be enabled again: \(failure)")
                let removal = state.withLock { $0.listens.remove(characteristic) }
                removal?.record?.subscription?.cancel()
                removal?.listeners.forEach { $0.end(with: failure) }
                if case .disconnected = failure { return }
            }
        }
    }

    /// Notifications or indications arrived for a listen (one transport batch).
    private func didReceive(_ values: [Data], on characteristic: CharacteristicIdentifier, from link: PeripheralLink) {
        // Only the receiver is taken under the lock: this runs once per batch on the reader thread.
        let (receivers, observers, queue) = state.withLock { state -> ([ListenReceiver], [any NotificationObserver], DispatchQueue) in
            guard let record = state.listens.record(for: characteristic) else { return ([], [], state.callbackQueue) }
            let observers = state.notificationObservers.isEmpty ? [] : state.notificationObservers.live()
            if record.listeners.isEmpty {
                return ([.restorer(state.restoration?.config.listenRestorer, state.callbackQueue)], observers, state.callbackQueue)
            }
            let receivers = record.listeners.map { listener -> ListenReceiver in
                listener.batchHandler.map(ListenReceiver.batch) ?? .each(listener.handler)
            }
            return (receivers, observers, state.callbackQueue)
        }
        if !receivers.isEmpty {
            publishNotifications(values, on: characteristic, from: link.identifier, observers: observers, queue: queue)
        }
        for receiver in receivers { deliver(values, on: characteristic, from: link, to: receiver) }
    }

    /// Hands one batch to one receiver of a listen.
    private func deliver(_ values: [Data], on characteristic: CharacteristicIdentifier, from link: PeripheralLink, to receiver: ListenReceiver) {
        switch receiver {
        case let .batch(batchHandler):
            batchHandler(values)
        case let .each(handler):
            for value in values { handler(.success(value)) }
        case .restorer(nil, _):
            log(.info, "a value arrived on \(characteristic), which has no listen callback and no listen restorer: ending the listen")
            removeListen(on: characteristic, privileged: true) { _ in }
        case let .restorer(restorer?, queue):
            // No callback: the listen restorer decides what to do with each value.
            for value in values {
                queue.async { [self] in
                    let action = restorer.didReceiveUnhandledListen(from: link.identifier, on: characteristic, with: value)
                    self.log(.info, "unhandled value on \(characteristic): the listen restorer answered \(action)")
                    if action == .stopListen, self.state.withLock({ $0.listens.record(for: characteristic)?.listeners.isEmpty == true }) {
                        self.removeListen(on: characteristic, privileged: true) { _ in }
                    }
                }
            }
        }
    }

    /// Ends every listen; their handlers get `error` if one is given.
    func endAllListens(notifying error: BluejayError?) {
        let records = state.withLock { $0.listens.removeAll() }
        for record in records.values {
            record.subscription?.cancel()
            record.end(with: error)
        }
    }

    /// Tells the listeners of removed listens that they ended.
    func failListenHandlers(_ records: [ListenRegistry.Record], with error: BluejayError) {
        let broadcast = state.withLock { $0.broadcastErrorsToListeners }
        for listener in records.flatMap(\.listeners) {
            listener.end(with: listener.isSynchronous || broadcast ? error : nil)
        }
    }
}
