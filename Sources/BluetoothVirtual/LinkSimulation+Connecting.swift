import BluetoothCore
import BluetoothHCI

extension LinkSimulation {
    mutating func createConnection(_ command: LECreateConnectionCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard ParameterRanges.legacyScan(interval: command.scanInterval, window: command.scanWindow) else {
            status(id, opcode, .invalidCommandParameters)
            return
        }
        startInitiating(id, opcode: opcode, peer: command.peer, filterPolicy: command.initiatorFilterPolicy, ownAddressType: command.ownAddressType,
                        scanInterval: command.scanInterval, scanWindow: command.scanWindow,
                        intervalMin: command.connectionIntervalMin, intervalMax: command.connectionIntervalMax,
                        latency: command.maxLatency, timeout: command.supervisionTimeout)
    }

    mutating func extendedCreateConnection(_ command: LEExtendedCreateConnectionCommand, opcode: HCIOpcode, from id: ControllerID) {
        // LE 2M cannot be scanned: one of the scannable PHYs is needed (Core 6.0, Vol 4, Part E, 7.8.66).
        guard let phy = command.le1M else {
            let supportsCoded = controllers[id]?.supportedPHYs.contains(.leCoded) == true
            status(id, opcode, command.leCoded != nil && !supportsCoded ? .unsupportedFeatureOrParameter : .invalidCommandParameters)
            return
        }
        // Peer_Address_Type 0x00 or 0x01 only: an identity is named with those (7.8.66).
        guard ParameterRanges.extendedScan(interval: phy.scanInterval, window: phy.scanWindow),
              command.peer.type == .public || command.peer.type == .random else {
            status(id, opcode, .invalidCommandParameters)
            return
        }
        startInitiating(id, opcode: opcode, peer: command.peer, filterPolicy: command.initiatorFilterPolicy, ownAddressType: command.ownAddressType,
                        scanInterval: phy.scanInterval, scanWindow: phy.scanWindow,
                        intervalMin: phy.connectionIntervalMin, intervalMax: phy.connectionIntervalMax,
                        latency: phy.maxLatency, timeout: phy.supervisionTimeout)
    }

    private mutating func startInitiating(_ id: ControllerID, opcode: HCIOpcode, peer: DeviceAddress, filterPolicy: InitiatorFilterPolicy,
                                          ownAddressType: OwnAddressType, scanInterval: UInt16, scanWindow: UInt16,
                                          intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        guard let state = controllers[id] else { return }
        // Core 6.0, Vol 4, Part E, 7.8.12: one LE Create Connection at a time.
        guard state.initiating == nil else {
            status(id, opcode, .commandDisallowed)
            return
        }
        guard ParameterRanges.connection(intervalMin: intervalMin, intervalMax: intervalMax, latency: latency, timeout: timeout),
              let ownAddress = state.ownAddress(ownAddressType) else {
            status(id, opcode, .invalidCommandParameters)
            return
        }
        if filterPolicy == .usePeerAddress, isConnected(id, to: peer) {
            status(id, opcode, .connectionAlreadyExists)
            return
        }
        guard state.connections.count < state.configuration.maximumConnections else {
            status(id, opcode, .connectionLimitExceeded)
            return
        }
        let window = RadioTiming.slots(scanWindow)
        controllers[id]?.initiating = InitiatingState(
            peer: peer, filterPolicy: filterPolicy, ownAddress: ownAddress,
            schedule: ScanSchedule(start: now, interval: RadioTiming.slots(scanInterval), window: window),
            parameters: LinkParameters(interval: intervalMin, latency: latency, timeout: timeout))
        status(id, opcode, .success)
        logger.debug("controller \(id): initiating a connection to \(peer)")
    }

    /// Whether `id` already has a connection to the device with this address.
    private func isConnected(_ id: ControllerID, to peer: DeviceAddress) -> Bool {
        guard let state = controllers[id] else { return false }
        return state.connections.values.contains { connectionID in
            guard let connection = connections[connectionID], let role = connection.role(of: id) else { return false }
            let other = connection.end(role.peer).address
            return other.address == peer.address && other.type.base == peer.type.base
        }
    }

    mutating func cancelCreateConnection(opcode: HCIOpcode, from id: ControllerID) {
        // Core 6.0, Vol 4, Part E, 7.8.13: Command Disallowed unless a connection is being created.
        guard let initiating = controllers[id]?.initiating, !initiating.connectRequestSent else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        controllers[id]?.initiating = nil
        complete(id, opcode, .success)
        emitConnectionComplete(to: id, status: .unknownConnectionIdentifier, handle: 0, role: .central, peer: initiating.peer,
                               parameters: LinkParameters(interval: 0, latency: 0, timeout: 0))
    }

    /// An initiator hears a connectable advertising event and answers with CONNECT_IND
    /// (AUX_CONNECT_REQ for an advertising set's extended PDUs). Returns whether a connection
    /// was created (the advertiser then stops advertising).
    mutating func offerConnection(_ air: AirAdvertisement, from advertiser: ControllerID, to initiator: ControllerID) -> Bool {
        guard let state = controllers[initiator], let initiating = state.initiating, !initiating.connectRequestSent,
              initiating.schedule.isListening(at: now) else { return false }
        guard air.isConnectable else { return false }
        if air.isDirected, air.directAddress?.address != initiating.ownAddress.address { return false }
        let address = air.address
        // The Filter Accept List is empty: only a named peer can be connected.
        guard initiating.filterPolicy == .usePeerAddress, Self.names(initiating.peer, address, resolution: state.resolution(of: address)) else {
            return false
        }
        // The advertiser must hear the CONNECT_IND too.
        guard canTalk(advertiser, initiator) else { return false }
        switch controllers[advertiser]?.acceptance ?? .accept {
        case .accept:
            establishConnection(central: initiator, peripheral: advertiser, peripheralAddress: address, initiating: initiating,
                                advertisingSet: air.setHandle)
            return true
        case .ignore:
            return false
        case .failToEstablish:
            controllers[initiator]?.initiating?.connectRequestSent = true
            let failure = now + initiating.parameters.intervalDuration * RadioTiming.establishmentEventCount
            controllers[initiator]?.initiating?.failureTimer = timers.schedule(at: failure, .establishmentFailure(initiator))
            return false
        }
    }

    /// Whether LE Create Connection's `peer` names the advertiser at `address`: the same
    /// address, or, for an identity with the resolved address types 0x02 and 0x03, a private
    /// address the resolving list resolves to it, or the identity itself where its privacy mode
    /// accepts it (Core 6.0, Vol 4, Part E, 7.8.12; Vol 6, Part B, 4.7). With 0x00 and 0x01 an
    /// identity in the resolving list names the private addresses it resolves too: LE Extended
    /// Create Connection has no other way to name it (7.8.66).
    private static func names(_ peer: DeviceAddress, _ address: DeviceAddress, resolution: ResolvingList.Resolution) -> Bool {
        guard peer.type == .publicIdentity || peer.type == .randomIdentity else {
            guard resolution != .ignored else { return false }
            if case let .resolved(resolved, _) = resolution, resolved == peer { return true }
            return peer.address == address.address && peer.type.base == address.type.base
        }
        let identity = DeviceAddress(peer.address, type: peer.type.base)
        switch resolution {
        case let .resolved(resolved, _), let .identity(resolved): return resolved == identity
        case .ignored, .unresolved: return false
        }
    }

    /// The connection sent to a silent advertiser was never established.
    mutating func initiationDidFail(_ id: ControllerID) {
        guard let initiating = controllers[id]?.initiating, initiating.connectRequestSent else { return }
        controllers[id]?.initiating = nil
        emitConnectionComplete(to: id, status: .connectionFailedToBeEstablished, handle: 0, role: .central, peer: initiating.peer,
                               parameters: LinkParameters(interval: 0, latency: 0, timeout: 0))
    }

    /// CONNECT_IND went through: both controllers have a connection, their hosts are told,
    /// the legacy advertiser stops (Core 6.0, Vol 4, Part E, 7.8.9), or the advertising set
    /// does and says so after the connection complete event (7.7.65.18), and the first
    /// connection event follows after the transmit window delay.
    private mutating func establishConnection(central: ControllerID, peripheral: ControllerID, peripheralAddress: DeviceAddress,
                                              initiating: InitiatingState, advertisingSet: UInt8?) {
        guard var centralState = controllers[central], var peripheralState = controllers[peripheral] else { return }
        let id = makeConnectionID()
        let centralHandle = centralState.allocateHandle()
        let peripheralHandle = peripheralState.allocateHandle()
        centralState.connections[centralHandle] = id
        centralState.initiating = nil
        peripheralState.connections[peripheralHandle] = id
        controllers[central] = centralState
        controllers[peripheral] = peripheralState
        if advertisingSet == nil { stopAdvertising(peripheral) }

        var connection = LinkConnection(
            id: id,
            central: .init(controller: central, handle: centralHandle, address: initiating.ownAddress,
                           preferredTxOctets: centralState.suggestedTxOctets, maximumRxOctets: centralState.configuration.maximumDataLength),
            peripheral: .init(controller: peripheral, handle: peripheralHandle, address: peripheralAddress,
                              preferredTxOctets: peripheralState.suggestedTxOctets, maximumRxOctets: peripheralState.configuration.maximumDataLength),
            parameters: initiating.parameters,
            firstAnchor: now + RadioTiming.connectionSetupDelay * 2,
            createdAt: now)
        // Controllers whose hosts suggested longer data PDUs update the data length on their own.
        if connection.central.preferredTxOctets > 27 || connection.peripheral.preferredTxOctets > 27 {
            connection.procedures.append(.dataLengthUpdate(requester: nil, at: RadioTiming.exchangeEventCount))
        }
        connection.timer = timers.schedule(at: connection.nextAnchor, .connectionEvent(id))
        connections[id] = connection
        logger.debug("connection \(id.value): \(central) (\(Hex.format(centralHandle))) → \(peripheral) (\(Hex.format(peripheralHandle))), interval \(initiating.parameters.intervalDuration)")

        // Each side reports the other as its resolving list resolves it.
        let peripheralAsSeen = centralState.resolution(of: peripheralAddress)
        let centralAsSeen = peripheralState.resolution(of: initiating.ownAddress)
        emitConnectionComplete(to: central, status: .success, handle: centralHandle, role: .central, peer: peripheralAsSeen.reported(peripheralAddress),
                               peerPrivateAddress: peripheralAsSeen.privateAddress, parameters: initiating.parameters)
        emitConnectionComplete(to: peripheral, status: .success, handle: peripheralHandle, role: .peripheral,
                               peer: centralAsSeen.reported(initiating.ownAddress), peerPrivateAddress: centralAsSeen.privateAddress,
                               parameters: initiating.parameters)
        let algorithm: ChannelSelectionAlgorithm = centralState.configuration.leFeatures.contains(.channelSelectionAlgorithm2)
            && peripheralState.configuration.leFeatures.contains(.channelSelectionAlgorithm2) ? .algorithm2 : .algorithm1
        emit(.channelSelectionAlgorithm(LEChannelSelectionAlgorithmEvent(connectionHandle: centralHandle, channelSelectionAlgorithm: algorithm)), to: central)
        emit(.channelSelectionAlgorithm(LEChannelSelectionAlgorithmEvent(connectionHandle: peripheralHandle, channelSelectionAlgorithm: algorithm)), to: peripheral)
        if let advertisingSet {
            terminateAdvertisingSet(advertisingSet, of: peripheral, status: .success, connectionHandle: peripheralHandle)
        }
    }

    /// LE Enhanced Connection Complete [v2] or [v1], or LE Connection Complete: the newest one
    /// the host unmasked (Core 6.0, Vol 4, Part E, 7.7.65.10).
    /// A peer the resolving list resolved comes with its identity (type 0x02 or 0x03) and, in
    /// the enhanced events, its private address (`peerPrivateAddress`).
    mutating func emitConnectionComplete(to id: ControllerID, status: HCIStatus, handle: UInt16, role: ConnectionRole,
                                         peer: DeviceAddress, peerPrivateAddress: BluetoothAddress = .zero, parameters: LinkParameters) {
        guard let state = controllers[id] else { return }
        let accuracy: ClockAccuracy = role == .central ? .ppm500 : .ppm50
        let mask = state.leEventMask
        if mask.contains(.enhancedConnectionCompleteV2) {
            emit(.enhancedConnectionCompleteV2(LEEnhancedConnectionCompleteV2Event(
                status: status, connectionHandle: handle, role: role, peerAddressType: peer.type, peerAddress: peer.address,
                peerResolvablePrivateAddress: peerPrivateAddress,
                connectionInterval: parameters.interval, peripheralLatency: parameters.latency, supervisionTimeout: parameters.timeout,
                centralClockAccuracy: accuracy)), to: id)
        } else if mask.contains(.enhancedConnectionComplete) {
            emit(.enhancedConnectionComplete(LEEnhancedConnectionCompleteEvent(
                status: status, connectionHandle: handle, role: role, peerAddressType: peer.type, peerAddress: peer.address,
                peerResolvablePrivateAddress: peerPrivateAddress,
                connectionInterval: parameters.interval, peripheralLatency: parameters.latency, supervisionTimeout: parameters.timeout,
                centralClockAccuracy: accuracy)), to: id)
        } else {
            emit(.connectionComplete(LEConnectionCompleteEvent(
                status: status, connectionHandle: handle, role: role, peerAddressType: peer.type.base, peerAddress: peer.address,
                connectionInterval: parameters.interval, peripheralLatency: parameters.latency, supervisionTimeout: parameters.timeout,
                centralClockAccuracy: accuracy)), to: id)
        }
    }
}
