import BluetoothCore

/// Notifications and indications (Core 6.0, Vol 3, Part F, 3.4.7; Vol 3, Part G, 4.10 and
/// 4.11): to each subscribed client, cut to ATT_MTU − 3 octets; indications one at a time per
/// client, each waiting for its confirmation.
///
/// A value whose reads need security is pushed only to clients whose link has it when the
/// value leaves (Core 6.0, Vol 3, Part C, 10.3.1): the read requirements are checked against
/// the link's security at that moment (the ATT bearer's, which the host updates on Encryption
/// Change and bond removal), not only when the client subscribed, and again for each queued
/// indication as it is sent.
extension GATTServer {
    enum PushOutcome: Sendable, Equatable {
        case sent
        case queueFull
        case notConnected
        case timedOut
    }

    /// Stores a characteristic's new value and pushes it to every client that subscribed
    /// (or to those of `connectionHandles` that did): an indication to a client that asked
    /// for indications, else a notification.
    ///
    /// The subscribers are those at the moment of the call, and every value goes out without
    /// the server doing anything else in between (no suspension), so a client whose
    /// configuration changes meanwhile is served by the configuration it had.
    ///
    /// Returns what each subscriber got. A client whose queue is full gets nothing this time
    /// (``GATTValueUpdate/queueFull``) and ``GATTServerEvent/readyToUpdateSubscribers(connectionHandle:)``
    /// tells when to try again. A client whose link lacks the security a read of the value
    /// needs gets nothing (``GATTValueUpdate/withheld``, with the reason). A bonded client
    /// subscribed and away gets it when it comes back, if it asked for indications or the
    /// characteristic notifies its latest value on reconnection (``GATTValueUpdate/deferred``;
    /// not when `connectionHandles` names the connections).
    public func updateValue(_ value: [UInt8], forHandle valueHandle: UInt16,
                            connectionHandles: [UInt16]? = nil) async throws(GATTServerError) -> GATTValueUpdate {
        guard let attribute = database.attribute(at: valueHandle), case .value = attribute.kind else {
            throw .unknownAttribute(valueHandle)
        }
        guard value.count <= attribute.maximumLength else { throw .valueTooLong(length: value.count, maximum: attribute.maximumLength) }
        database.setValue(value, at: valueHandle)
        let targets = clients.values
            .filter { !($0.configurations[valueHandle] ?? []).isEmpty && (connectionHandles?.contains($0.connectionHandle) ?? true) }
            .map { ($0.connectionHandle, $0.configurations[valueHandle] ?? [], attribute.readRequirement.shortfall(on: currentSecurity(of: $0))) }
            .sorted { $0.0 < $1.0 }
        var update = GATTValueUpdate()
        if connectionHandles == nil { update.deferred = deferForAbsentClients(value, attribute) }
        for (connectionHandle, configuration, refusal) in targets {
            if let refusal {
                logger.debug("\(attribute.type) not pushed to connection \(Hex.format(connectionHandle, digits: 4)): \(refusal)")
                update.withheld.append(GATTValueUpdate.Withheld(connectionHandle: connectionHandle, reason: refusal))
            } else if configuration.contains(.indication) {
                let mtu = mtu(connectionHandle: connectionHandle)
                switch enqueueIndication(Array(value.prefix(Int(mtu) - 3)), valueHandle: valueHandle, connectionHandle: connectionHandle, ticket: nil) {
                case .sent: update.indicated.append(connectionHandle)
                case .queueFull: update.queueFull.append(connectionHandle)
                case .notConnected, .timedOut: break
                }
            } else {
                switch sendNotification(value, valueHandle: valueHandle, connectionHandle: connectionHandle) {
                case .sent: update.notified.append(connectionHandle)
                case .queueFull: update.queueFull.append(connectionHandle)
                case .notConnected, .timedOut: break
                }
            }
        }
        return update
    }

    /// Sends one notification to one client that enabled notifications, without storing the
    /// value. Returns once it is queued for the controller. Throws
    /// ``GATTServerError/insufficientSecurity(connectionHandle:_:)`` when the client's link
    /// lacks the security a read of the value needs.
    public func notify(_ value: [UInt8], forHandle valueHandle: UInt16, connectionHandle: UInt16) async throws(GATTServerError) {
        try checkSubscription(valueHandle: valueHandle, connectionHandle: connectionHandle, needs: .notification)
        switch sendNotification(value, valueHandle: valueHandle, connectionHandle: connectionHandle) {
        case .sent: return
        case .queueFull: throw .queueFull(connectionHandle: connectionHandle)
        case .notConnected, .timedOut: throw .notConnected(connectionHandle: connectionHandle)
        }
    }

    /// Sends one indication to one client that enabled indications, without storing the
    /// value, and returns once the client confirmed it. Throws
    /// ``GATTServerError/indicationTimeout(connectionHandle:)`` when it did not within the
    /// ATT transaction timeout, and ``GATTServerError/insufficientSecurity(connectionHandle:_:)``
    /// when the client's link lacks the security a read of the value needs (when called, or
    /// when the indication's turn came).
    public func indicate(_ value: [UInt8], forHandle valueHandle: UInt16, connectionHandle: UInt16) async throws(GATTServerError) {
        try checkSubscription(valueHandle: valueHandle, connectionHandle: connectionHandle, needs: .indication)
        let mtu = mtu(connectionHandle: connectionHandle)
        let part = Array(value.prefix(Int(mtu) - 3))
        do {
            try await withCheckedThrowingContinuation { (ticket: ConnectedClient.Ticket) in
                switch enqueueIndication(part, valueHandle: valueHandle, connectionHandle: connectionHandle, ticket: ticket) {
                case .sent: break
                case .queueFull: ticket.resume(throwing: GATTServerError.queueFull(connectionHandle: connectionHandle))
                case .notConnected: ticket.resume(throwing: GATTServerError.notConnected(connectionHandle: connectionHandle))
                case .timedOut: ticket.resume(throwing: GATTServerError.indicationTimeout(connectionHandle: connectionHandle))
                }
            }
        } catch let error as GATTServerError {
            throw error
        } catch {
            throw .notConnected(connectionHandle: connectionHandle)
        }
    }

    private func checkSubscription(valueHandle: UInt16, connectionHandle: UInt16, needs bit: ClientCharacteristicConfiguration) throws(GATTServerError) {
        guard let attribute = database.attribute(at: valueHandle), case let .value(properties) = attribute.kind else {
            throw .unknownAttribute(valueHandle)
        }
        let property: CharacteristicProperties = bit == .indication ? .indicate : .notify
        guard properties.contains(property) else {
            throw .notPermitted("characteristic \(attribute.type) does not have the \(property) property")
        }
        guard let client = clients[connectionHandle] else { throw .notConnected(connectionHandle: connectionHandle) }
        guard client.configurations[valueHandle]?.contains(bit) == true else {
            throw .notSubscribed(connectionHandle: connectionHandle, valueHandle: valueHandle)
        }
        if let refusal = attribute.readRequirement.shortfall(on: currentSecurity(of: client)) {
            throw .insufficientSecurity(connectionHandle: connectionHandle, refusal)
        }
    }

    // MARK: Notifications

    func sendNotification(_ value: [UInt8], valueHandle: UInt16, connectionHandle: UInt16) -> PushOutcome {
        guard var client = clients[connectionHandle] else { return .notConnected }
        let mtu = mtu(of: client)
        guard client.notificationsInFlight < settings.maximumPendingNotifications else {
            client.owesReadyEvent = true
            clients[connectionHandle] = client
            return .queueFull
        }
        client.notificationsInFlight += 1
        clients[connectionHandle] = client
        let id = client.id
        let notification = ATTHandleValueNotification(handle: valueHandle, value: Array(value.prefix(Int(mtu) - 3)))
        // Through the inbox, in order with the rest, without a task per notification.
        let inbox = self.inbox
        send(.handleValueNotification(notification), to: connectionHandle) { _ in
            inbox.yield(.notificationLeft(clientID: id, connectionHandle: connectionHandle))
        }
        return .sent
    }

    /// The controller took a notification (or the link failed it): room for one more.
    func notificationDidLeave(clientID: UInt64, connectionHandle: UInt16) {
        guard var client = client(id: clientID, connectionHandle: connectionHandle) else { return }
        client.notificationsInFlight = max(0, client.notificationsInFlight - 1)
        let ready = client.owesReadyEvent && client.notificationsInFlight < settings.maximumPendingNotifications
        if ready { client.owesReadyEvent = false }
        clients[connectionHandle] = client
        if ready { broadcast(.readyToUpdateSubscribers(connectionHandle: connectionHandle)) }
    }

    // MARK: Indications

    /// Queues an indication (already cut to the MTU) and sends it if none is outstanding.
    func enqueueIndication(_ value: [UInt8], valueHandle: UInt16, connectionHandle: UInt16, ticket: ConnectedClient.Ticket?) -> PushOutcome {
        guard var client = clients[connectionHandle] else { return .notConnected }
        guard !client.indicationTimedOut else { return .timedOut }
        guard !client.indications.isFull else {
            client.owesReadyEvent = true
            clients[connectionHandle] = client
            return .queueFull
        }
        let item = IndicationQueue<ConnectedClient.Ticket>.Item(id: makeIdentifier(), handle: valueHandle, value: value, ticket: ticket)
        let ready = client.indications.enqueue(item)
        clients[connectionHandle] = client
        if let ready { transmit(ready, connectionHandle: connectionHandle) }
        return .sent
    }

    private func transmit(_ first: IndicationQueue<ConnectedClient.Ticket>.Item, connectionHandle: UInt16) {
        guard var client = clients[connectionHandle] else { return }
        // Checked again as it leaves: the link may have lost what the value needs while the
        // indication waited its turn (Core 6.0, Vol 3, Part C, 10.3.1).
        var item = first
        while let refusal = database.attribute(at: item.handle)?.readRequirement.shortfall(on: currentSecurity(of: client)) {
            logger.debug("indication of \(Hex.format(item.handle, digits: 4)) to \(Hex.format(connectionHandle, digits: 4)) dropped: \(refusal)")
            item.ticket?.resume(throwing: GATTServerError.insufficientSecurity(connectionHandle: connectionHandle, refusal))
            let (_, next) = client.indications.confirm()
            clients[connectionHandle] = client
            guard let next else { return }
            item = next
        }
        send(.handleValueIndication(ATTHandleValueIndication(handle: item.handle, value: item.value)), to: connectionHandle)
        let clientID = client.id
        let clock = clock
        let deadline = clock.now + settings.indicationTimeout
        client.indicationTimer?.cancel()
        client.indicationTimer = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            await self?.indicationDidTimeOut(clientID: clientID, connectionHandle: connectionHandle, itemID: item.id)
        }
        clients[connectionHandle] = client
    }

    /// A Handle Value Confirmation (Vol 3, Part F, 3.4.7.3): the outstanding indication is
    /// done and the next may go.
    func didReceiveConfirmation(_ bytes: [UInt8], connectionHandle: UInt16) {
        guard bytes.count == 1 else {
            logger.debug("malformed Handle Value Confirmation ignored")
            return
        }
        guard var client = clients[connectionHandle] else { return }
        let (confirmed, next) = client.indications.confirm()
        guard let confirmed else {
            logger.debug("Handle Value Confirmation without an indication ignored")
            return
        }
        client.indicationTimer?.cancel()
        client.indicationTimer = nil
        let ready = client.owesReadyEvent && !client.indications.isFull
            && client.notificationsInFlight < settings.maximumPendingNotifications
        if ready { client.owesReadyEvent = false }
        clients[connectionHandle] = client
        confirmed.ticket?.resume()
        if confirmed.handle == AttributeDatabase.serviceChangedHandle { didConfirmServiceChanged(connectionHandle: connectionHandle) }
        if let next { transmit(next, connectionHandle: connectionHandle) }
        if ready { broadcast(.readyToUpdateSubscribers(connectionHandle: connectionHandle)) }
    }

    /// No confirmation within the transaction timeout: the client is not following the
    /// protocol, so nothing more is indicated to it (Vol 3, Part F, 3.3.3).
    private func indicationDidTimeOut(clientID: UInt64, connectionHandle: UInt16, itemID: UInt64) {
        guard var client = client(id: clientID, connectionHandle: connectionHandle),
              client.indications.outstanding?.id == itemID else { return }
        logger.error("connection \(Hex.format(connectionHandle, digits: 4)) did not confirm an indication within \(settings.indicationTimeout); no more indications go to it")
        client.indicationTimedOut = true
        client.indicationTimer = nil
        let items = client.indications.removeAll()
        clients[connectionHandle] = client
        for item in items { item.ticket?.resume(throwing: GATTServerError.indicationTimeout(connectionHandle: connectionHandle)) }
    }
}
