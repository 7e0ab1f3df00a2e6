import BluetoothCore
import BluetoothHCI

extension LinkSimulation {
    // MARK: Commands on a connection

    mutating func disconnect(_ command: DisconnectCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            status(id, opcode, .unknownConnectionIdentifier)
            return
        }
        guard ParameterRanges.disconnectReasons.contains(command.reason) else {
            status(id, opcode, .invalidCommandParameters)
            return
        }
        guard connection.termination == nil else {
            status(id, opcode, .commandDisallowed)
            return
        }
        connections[connection.id]?.termination = .init(initiator: role, reason: command.reason)
        status(id, opcode, .success)
    }

    mutating func updateConnection(_ command: LEConnectionUpdateCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            status(id, opcode, .unknownConnectionIdentifier)
            return
        }
        guard ParameterRanges.connection(intervalMin: command.connectionIntervalMin, intervalMax: command.connectionIntervalMax,
                                         latency: command.maxLatency, timeout: command.supervisionTimeout) else {
            status(id, opcode, .invalidCommandParameters)
            return
        }
        guard !connection.procedures.contains(where: \.changesParameters), connection.termination == nil else {
            status(id, opcode, .commandDisallowed)
            return
        }
        status(id, opcode, .success)
        let next = connection.eventCounter
        if role == .central {
            // The central uses the connection update procedure directly (Core 6.0, Vol 6, Part B, 5.1.1).
            let parameters = LinkParameters(interval: command.connectionIntervalMin, latency: command.maxLatency, timeout: command.supervisionTimeout)
            connections[connection.id]?.procedures.append(.connectionUpdate(requester: .central, parameters: parameters, at: next + RadioTiming.procedureInstantOffset))
        } else {
            // The peripheral asks the central with the connection parameters request procedure (5.1.7).
            connections[connection.id]?.procedures.append(.parameterRequest(
                minimum: command.connectionIntervalMin, maximum: command.connectionIntervalMax,
                latency: command.maxLatency, timeout: command.supervisionTimeout, at: next + 1))
        }
    }

    mutating func replyToParameterRequest(_ command: LERemoteConnectionParameterRequestReplyCommand, opcode: HCIOpcode, from id: ControllerID) {
        let handle = handleBytes(command.connectionHandle)
        guard let (connection, _) = connection(command.connectionHandle, of: id) else {
            complete(id, opcode, .unknownConnectionIdentifier, handle)
            return
        }
        guard let index = awaitedParameterRequest(connection, of: id) else {
            complete(id, opcode, .commandDisallowed, handle)
            return
        }
        guard ParameterRanges.connection(intervalMin: command.intervalMin, intervalMax: command.intervalMax,
                                         latency: command.maxLatency, timeout: command.timeout) else {
            complete(id, opcode, .invalidCommandParameters, handle)
            return
        }
        let parameters = LinkParameters(interval: command.intervalMin, latency: command.maxLatency, timeout: command.timeout)
        connections[connection.id]?.procedures[index] = .connectionUpdate(
            requester: .peripheral, parameters: parameters, at: connection.eventCounter + RadioTiming.procedureInstantOffset)
        complete(id, opcode, .success, handle)
    }

    mutating func refuseParameterRequest(_ command: LERemoteConnectionParameterRequestNegativeReplyCommand, opcode: HCIOpcode, from id: ControllerID) {
        let handle = handleBytes(command.connectionHandle)
        guard let (connection, _) = connection(command.connectionHandle, of: id) else {
            complete(id, opcode, .unknownConnectionIdentifier, handle)
            return
        }
        guard let index = awaitedParameterRequest(connection, of: id) else {
            complete(id, opcode, .commandDisallowed, handle)
            return
        }
        connections[connection.id]?.procedures[index] = .parameterRequestRejected(reason: command.reason, at: connection.eventCounter + 1)
        complete(id, opcode, .success, handle)
    }

    /// The index of a parameters request the central's host has been asked about.
    private func awaitedParameterRequest(_ connection: LinkConnection, of id: ControllerID) -> Int? {
        guard connection.role(of: id) == .central else { return nil }
        return connection.procedures.firstIndex { procedure in
            if case .awaitingParameterReply = procedure { return true }
            return false
        }
    }

    mutating func readRemoteFeatures(_ command: LEReadRemoteFeaturesCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            status(id, opcode, .unknownConnectionIdentifier)
            return
        }
        connections[connection.id]?.procedures.append(.featureExchange(requester: role, at: connection.eventCounter + RadioTiming.exchangeEventCount))
        status(id, opcode, .success)
    }

    mutating func readRemoteVersion(_ command: ReadRemoteVersionInformationCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            status(id, opcode, .unknownConnectionIdentifier)
            return
        }
        connections[connection.id]?.procedures.append(.versionExchange(requester: role, at: connection.eventCounter + RadioTiming.exchangeEventCount))
        status(id, opcode, .success)
    }

    mutating func setDataLength(_ command: LESetDataLengthCommand, opcode: HCIOpcode, from id: ControllerID) {
        let handle = handleBytes(command.connectionHandle)
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            complete(id, opcode, .unknownConnectionIdentifier, handle)
            return
        }
        guard ParameterRanges.dataLength(octets: command.txOctets, time: command.txTime) else {
            complete(id, opcode, .invalidCommandParameters, handle)
            return
        }
        let maximum = controllers[id]?.configuration.maximumDataLength ?? 251
        connections[connection.id]?.updateEnd(role) { $0.preferredTxOctets = min(command.txOctets, maximum) }
        connections[connection.id]?.procedures.append(.dataLengthUpdate(requester: role, at: connection.eventCounter + RadioTiming.exchangeEventCount))
        complete(id, opcode, .success, handle)
    }

    mutating func readPHY(_ command: LEReadPHYCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            complete(id, opcode, .unknownConnectionIdentifier, handleBytes(command.connectionHandle))
            return
        }
        complete(id, opcode, returning: LEReadPHYCommand.ReturnParameters(
            connectionHandle: command.connectionHandle, txPHY: connection.end(role).txPHY, rxPHY: connection.end(role.peer).txPHY))
    }

    mutating func setPHY(_ command: LESetPHYCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            status(id, opcode, .unknownConnectionIdentifier)
            return
        }
        // Core 6.0, Vol 4, Part E, 7.8.49: with a preference, at least one PHY.
        let noTransmitPreference = command.allPHYs.contains(.noTransmitPreference)
        let noReceivePreference = command.allPHYs.contains(.noReceivePreference)
        guard noTransmitPreference || !command.txPHYs.isEmpty, noReceivePreference || !command.rxPHYs.isEmpty else {
            status(id, opcode, .invalidCommandParameters)
            return
        }
        // A PHY this controller lacks (or a reserved bit) is Unsupported Feature or Parameter
        // Value (Core 6.0, Vol 4, Part E, 7.8.49).
        let supported = controllers[id]?.supportedPHYs ?? .le1M
        guard noTransmitPreference || command.txPHYs.isSubset(of: supported),
              noReceivePreference || command.rxPHYs.isSubset(of: supported) else {
            status(id, opcode, .unsupportedFeatureOrParameter)
            return
        }
        guard !connection.procedures.contains(where: \.isPHYUpdate) else {
            status(id, opcode, .commandDisallowed)
            return
        }
        connections[connection.id]?.procedures.append(.phyUpdate(
            requester: role, transmit: noTransmitPreference ? .all : command.txPHYs, receive: noReceivePreference ? .all : command.rxPHYs,
            at: connection.eventCounter + RadioTiming.procedureInstantOffset))
        status(id, opcode, .success)
    }

    // MARK: Connection events

    /// One connection event: if both sides hear each other, the central and the peripheral
    /// exchange up to their packets-per-event of LL data PDUs each way and procedures due at
    /// this event complete; if not, the supervision timer runs on (Core 6.0, Vol 6, Part B,
    /// 4.5.1, 4.5.2).
    mutating func runConnectionEvent(_ id: LinkConnectionID) {
        guard var connection = connections[id] else { return }
        connection.timer = nil
        let heard = connection.central.isAlive && connection.peripheral.isAlive
            && canTalk(connection.central.controller, connection.peripheral.controller)
        if heard {
            connection.lastHeard = now
            connection.isEstablished = true
            if let termination = connection.termination {
                connections[id] = connection
                // LL_TERMINATE_IND acknowledged: the initiator reports Connection Terminated By
                // Local Host, the peer the reason it was given (Core 6.0, Vol 4, Part E, 7.7.5).
                close(id, reasons: [termination.initiator: .connectionTerminatedByLocalHost, termination.initiator.peer: termination.reason])
                return
            }
            connections[id] = connection
            exchangeData(on: id, from: .central)
            exchangeData(on: id, from: .peripheral)
            guard let updated = connections[id] else { return }
            connection = updated
        } else if (!connection.isEstablished && connection.eventCounter + 1 >= RadioTiming.establishmentEventCount)
                    || now - connection.lastHeard >= connection.parameters.timeoutDuration {
            connections[id] = connection
            // Never established: Connection Failed to be Established; else the supervision
            // timeout, Connection Timeout (Core 6.0, Vol 6, Part B, 4.5.2).
            let lost: HCIStatus = connection.isEstablished ? .connectionTimeout : .connectionFailedToBeEstablished
            if let termination = connection.termination {
                close(id, reasons: [termination.initiator: .connectionTerminatedByLocalHost, termination.initiator.peer: lost])
            } else {
                close(id, reasons: [.central: lost, .peripheral: lost])
            }
            logger.debug("connection \(id.value) lost: \(lost)")
            return
        }
        connections[id] = connection
        runProcedures(on: id, heard: heard)
        guard var scheduled = connections[id] else { return }
        scheduled.eventCounter += 1
        scheduled.nextAnchor += scheduled.parameters.intervalDuration
        scheduled.timer = timers.schedule(at: max(scheduled.nextAnchor, now), .connectionEvent(id))
        connections[id] = scheduled
    }

    /// Sends what `role` has queued for this event and reports the freed buffers to the
    /// sender's host with Number Of Completed Packets.
    private mutating func exchangeData(on id: LinkConnectionID, from role: ConnectionRole) {
        guard var connection = connections[id] else { return }
        let sender = connection.end(role)
        let receiver = connection.end(role.peer)
        let budget = controllers[sender.controller]?.configuration.packetsPerConnectionEvent ?? 4
        var result = LinkDataQueue.EventResult()
        connection.updateOutgoing(from: role) { queue in
            result = queue.runEvent(at: now, budget: budget, maxOctets: Int(sender.txOctets))
        }
        connections[id] = connection
        for pdu in result.pdus { deliverACL(pdu, handle: receiver.handle, to: receiver.controller) }
        guard result.completedPackets > 0 else { return }
        controllers[sender.controller]?.buffers.transmitted(handle: sender.handle, count: result.completedPackets)
        let freed = controllers[sender.controller]?.buffers.takeCompleted(handle: sender.handle) ?? 0
        if freed > 0 {
            emit(.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(entries: [.init(connectionHandle: sender.handle, completedPackets: UInt16(freed))])),
                 to: sender.controller)
        }
    }

    /// Ends a connection: each live side's host gets Disconnection Complete with its reason.
    mutating func close(_ id: LinkConnectionID, reasons: [ConnectionRole: HCIStatus]) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        timers.cancel(connection.timer)
        for role in [ConnectionRole.central, .peripheral] {
            let end = connection.end(role)
            guard end.isAlive, controllers[end.controller]?.connections[end.handle] == id else { continue }
            controllers[end.controller]?.connections[end.handle] = nil
            controllers[end.controller]?.buffers.connectionClosed(handle: end.handle)
            emit(.disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: end.handle, reason: reasons[role] ?? .connectionTimeout)),
                 to: end.controller)
        }
        logger.debug("connection \(id.value) closed: \(reasons)")
    }

    // MARK: Procedures

    private mutating func runProcedures(on id: LinkConnectionID, heard: Bool) {
        guard let connection = connections[id] else { return }
        let counter = connection.eventCounter
        var remaining: [LLProcedure] = []
        var due: [LLProcedure] = []
        for procedure in connection.procedures {
            // A connection update happens at its instant whether or not the event got
            // through; the exchanges need the event to.
            let isInstant: Bool
            if case .connectionUpdate = procedure { isInstant = true } else { isInstant = false }
            if procedure.dueEvent <= counter, heard || isInstant {
                due.append(procedure)
            } else {
                remaining.append(procedure)
            }
        }
        connections[id]?.procedures = remaining
        for procedure in due { complete(procedure, on: id) }
    }

    private mutating func complete(_ procedure: LLProcedure, on id: LinkConnectionID) {
        guard var connection = connections[id] else { return }
        switch procedure {
        case let .featureExchange(requester, _):
            let peer = connection.end(requester.peer)
            let features = controllers[peer.controller]?.configuration.leFeatures ?? []
            emit(.readRemoteFeaturesComplete(LEReadRemoteFeaturesCompleteEvent(connectionHandle: connection.end(requester).handle, features: features)),
                 to: connection.end(requester).controller)

        case let .versionExchange(requester, _):
            let peer = connection.end(requester.peer)
            let company = controllers[peer.controller]?.configuration.companyIdentifier ?? 0xFFFF
            emit(.readRemoteVersionInformationComplete(ReadRemoteVersionInformationCompleteEvent(
                connectionHandle: connection.end(requester).handle, version: ControllerCapabilities.version,
                companyIdentifier: company, subversion: ControllerCapabilities.subversion)), to: connection.end(requester).controller)

        case .dataLengthUpdate:
            let changed = connection.negotiateDataLength()
            connections[id] = connection
            // LE Data Length Change only when a value changed (Core 6.0, Vol 4, Part E, 7.7.65.7).
            guard changed else { return }
            for role in [ConnectionRole.central, .peripheral] {
                let end = connection.end(role)
                let peer = connection.end(role.peer)
                emit(.dataLengthChange(LEDataLengthChangeEvent(
                    connectionHandle: end.handle, maxTxOctets: end.txOctets, maxTxTime: RadioTiming.transmitTime(octets: end.txOctets),
                    maxRxOctets: peer.txOctets, maxRxTime: RadioTiming.transmitTime(octets: peer.txOctets))), to: end.controller)
            }

        case let .phyUpdate(requester, transmit, receive, _):
            let requesterEnd = connection.end(requester)
            let peerEnd = connection.end(requester.peer)
            let peerPHYs = controllers[peerEnd.controller]?.supportedPHYs ?? [.le1M]
            // A Link Layer with neither 2M nor Coded need not know the PHY update procedure
            // (Core 6.0, Vol 6, Part B, 4.6.9): it answers LL_UNKNOWN_RSP and the requester's
            // host hears Unsupported Remote Feature (Vol 6, Part B, 5.1.10).
            guard !peerPHYs.isDisjoint(with: [.le2M, .leCoded]) else {
                emit(.phyUpdateComplete(LEPHYUpdateCompleteEvent(status: .unsupportedRemoteFeature, connectionHandle: requesterEnd.handle,
                                                                 txPHY: requesterEnd.txPHY, rxPHY: peerEnd.txPHY)),
                     to: requesterEnd.controller)
                return
            }
            let common = (controllers[requesterEnd.controller]?.supportedPHYs ?? [.le1M]).intersection(peerPHYs)
            // The peer's preferences are its host's defaults (LE Set Default PHY): its receive
            // PHYs bound what the requester sends, its transmit PHYs what it receives.
            let peerDefaults = controllers[peerEnd.controller]?.defaultPHYs ?? (.all, .all)
            let newTx = Self.choosePHY(from: transmit.intersection(common).intersection(peerDefaults.rx)) ?? requesterEnd.txPHY
            let newRx = Self.choosePHY(from: receive.intersection(common).intersection(peerDefaults.tx)) ?? peerEnd.txPHY
            let changed = newTx != requesterEnd.txPHY || newRx != peerEnd.txPHY
            connection.updateEnd(requester) { $0.txPHY = newTx }
            connection.updateEnd(requester.peer) { $0.txPHY = newRx }
            connections[id] = connection
            // The requester always hears the outcome; the peer only of a change (7.7.65.12).
            emit(.phyUpdateComplete(LEPHYUpdateCompleteEvent(connectionHandle: requesterEnd.handle, txPHY: newTx, rxPHY: newRx)),
                 to: requesterEnd.controller)
            if changed {
                emit(.phyUpdateComplete(LEPHYUpdateCompleteEvent(connectionHandle: peerEnd.handle, txPHY: newRx, rxPHY: newTx)),
                     to: peerEnd.controller)
            }

        case let .connectionUpdate(requester, parameters, _):
            let changed = parameters != connection.parameters
            connection.parameters = parameters
            connections[id] = connection
            for role in [ConnectionRole.central, .peripheral] where role == requester || changed {
                let end = connection.end(role)
                guard end.isAlive else { continue }
                emit(.connectionUpdateComplete(LEConnectionUpdateCompleteEvent(
                    connectionHandle: end.handle, connectionInterval: parameters.interval,
                    peripheralLatency: parameters.latency, supervisionTimeout: parameters.timeout)), to: end.controller)
            }

        case let .parameterRequest(minimum, maximum, latency, timeout, at):
            let central = connection.end(.central)
            let unmasked = controllers[central.controller].map {
                $0.eventMask.contains(.leMeta) && $0.leEventMask.contains(.remoteConnectionParameterRequest)
            } ?? false
            let supported = controllers[central.controller]?.configuration.leFeatures.contains(.connectionParametersRequest) == true
            guard unmasked, supported else {
                // A central that cannot ask its host rejects the request (Core 6.0, Vol 4,
                // Part E, 7.7.65.6): the peripheral's host learns it from the update event.
                complete(.parameterRequestRejected(reason: .unsupportedRemoteFeature, at: at), on: id)
                return
            }
            connection.procedures.append(.awaitingParameterReply)
            connections[id] = connection
            emit(.remoteConnectionParameterRequest(LERemoteConnectionParameterRequestEvent(
                connectionHandle: central.handle, intervalMin: minimum, intervalMax: maximum, maxLatency: latency, timeout: timeout)),
                 to: central.controller)

        case .awaitingParameterReply:
            break

        case let .encryptionRequest(request, _):
            deliverEncryptionRequest(request, on: id)

        case .awaitingLongTermKey:
            break

        case let .encryptionStart(centralKey, peripheralKey, _):
            finishEncryptionStart(centralKey: centralKey, peripheralKey: peripheralKey, on: id)

        case let .encryptionRejected(reason, _):
            rejectEncryption(reason: reason, on: id)

        case let .parameterRequestRejected(reason, _):
            let peripheral = connection.end(.peripheral)
            emit(.connectionUpdateComplete(LEConnectionUpdateCompleteEvent(
                status: reason, connectionHandle: peripheral.handle, connectionInterval: connection.parameters.interval,
                peripheralLatency: connection.parameters.latency, supervisionTimeout: connection.parameters.timeout)), to: peripheral.controller)
        }
    }

    /// The fastest PHY of a set, `nil` for an empty set.
    private static func choosePHY(from set: LEPhySet) -> LEPhy? {
        if set.contains(.le2M) { return .le2M }
        if set.contains(.le1M) { return .le1M }
        if set.contains(.leCoded) { return .leCoded }
        return nil
    }
}
