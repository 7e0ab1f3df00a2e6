import BluetoothCore
import BluetoothHCI

/// Extended advertising sets (Core 6.0, Vol 4, Part E, 7.8.52-7.8.60): several sets at once,
/// each with its own parameters, data up to the controller's maximum and its own schedule.
extension LinkSimulation {
    /// The most advertising data an AUX_ADV_IND carries when it cannot be chained: the PDU
    /// payload's 255 octets less the extended header with AdvA and ADI (10 octets). Connectable
    /// extended advertising has no AUX_CHAIN_IND (Core 6.0, Vol 6, Part B, 2.3.4.9).
    static let connectableExtendedDataLimit = 245

    mutating func setAdvertisingSetRandomAddress(_ command: LESetAdvertisingSetRandomAddressCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let set = controllers[id]?.advertisingSets[command.advertisingHandle] else {
            complete(id, opcode, .unknownAdvertisingIdentifier)
            return
        }
        // 7.8.52: not while a connectable set advertises.
        if set.isEnabled, set.parameters.properties.contains(.connectable) {
            complete(id, opcode, .commandDisallowed)
            return
        }
        controllers[id]?.advertisingSets[command.advertisingHandle]?.randomAddress = command.randomAddress
        complete(id, opcode, .success)
    }

    mutating func setExtendedAdvertisingParameters(_ command: LESetExtendedAdvertisingParametersCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        let handle = command.advertisingHandle
        let existing = state.advertisingSets[handle]
        guard handle <= LESetExtendedAdvertisingParametersCommand.maximumHandle, command.properties.isValid,
              command.advertisingSID <= LESetExtendedAdvertisingParametersCommand.maximumSID,
              !command.primaryChannelMap.intersection(.all).isEmpty else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let highDuty = command.properties.contains(.highDutyCycleDirected)
        guard highDuty || (command.primaryIntervalMin >= 0x20 && command.primaryIntervalMin <= command.primaryIntervalMax) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        // 7.8.53: not while the set is enabled.
        if existing?.isEnabled == true {
            complete(id, opcode, .commandDisallowed)
            return
        }
        if existing == nil, state.advertisingSets.count >= state.configuration.maximumAdvertisingSets {
            complete(id, opcode, .memoryCapacityExceeded)
            return
        }
        let phys = state.supportedPHYs
        let primaryOK = command.primaryPHY == .le1M || (command.primaryPHY == .leCoded && phys.contains(.leCoded))
        let secondaryOK = command.secondaryPHY == .le1M || (command.secondaryPHY == .le2M && phys.contains(.le2M))
            || (command.secondaryPHY == .leCoded && phys.contains(.leCoded))
        guard primaryOK, secondaryOK else {
            complete(id, opcode, .unsupportedFeatureOrParameter)
            return
        }
        // Data already set must fit the new kind of PDU (7.8.53).
        if let existing, command.properties.contains(.legacy),
           existing.data.count > LESetAdvertisingDataCommand.maximumDataLength
            || existing.scanResponseData.count > LESetScanResponseDataCommand.maximumDataLength {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        var set = existing ?? AdvertisingSetState(parameters: command)
        set.parameters = command
        controllers[id]?.advertisingSets[handle] = set
        let power = command.txPower.map { min($0, state.configuration.txPower) } ?? state.configuration.txPower
        complete(id, opcode, returning: LESetExtendedAdvertisingParametersCommand.ReturnParameters(selectedTxPower: power))
    }

    mutating func setExtendedAdvertisingData(_ command: some ExtendedAdvertisingDataCommand, isScanResponse: Bool, opcode: HCIOpcode,
                                             from id: ControllerID) {
        guard let state = controllers[id] else { return }
        guard var set = state.advertisingSets[command.advertisingHandle] else {
            complete(id, opcode, .unknownAdvertisingIdentifier)
            return
        }
        let properties = set.parameters.properties
        let isLegacy = properties.contains(.legacy)
        // Legacy PDUs take one complete command of at most 31 octets; scan response data only
        // for scannable sets; scannable extended sets have no advertising data, their data
        // goes in the scan response (7.8.54-7.8.55).
        if isLegacy, command.operation != .complete || command.data.count > LESetAdvertisingDataCommand.maximumDataLength {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let takesData = isScanResponse ? properties.contains(.scannable) : (isLegacy || !properties.contains(.scannable))
        if !takesData, !command.data.isEmpty || command.operation != .complete {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        // While enabled, only whole data (or unchanged data) may be given (7.8.54).
        if set.isEnabled, command.operation != .complete, command.operation != .unchangedData {
            complete(id, opcode, .commandDisallowed)
            return
        }
        var pending = isScanResponse ? set.pendingScanResponse : set.pendingData
        var finished: [UInt8]?
        switch command.operation {
        case .complete:
            pending = nil
            finished = command.data
        case .firstFragment:
            pending = command.data
        case .intermediateFragment, .lastFragment:
            guard let started = pending, !command.data.isEmpty else {
                complete(id, opcode, .invalidCommandParameters)
                return
            }
            pending = started + command.data
            if command.operation == .lastFragment {
                finished = pending
                pending = nil
            }
        case .unchangedData:
            // A new Advertising DID for the same data: only for extended advertising data.
            guard !isScanResponse, !isLegacy, command.data.isEmpty else {
                complete(id, opcode, .invalidCommandParameters)
                return
            }
            complete(id, opcode, .success)
            return
        }
        let total = (pending ?? finished ?? []).count
        if total > state.configuration.maximumAdvertisingDataLength {
            complete(id, opcode, .memoryCapacityExceeded)
            return
        }
        if let finished, !isLegacy, properties.contains(.connectable), finished.count > Self.connectableExtendedDataLimit {
            complete(id, opcode, .packetTooLong)
            return
        }
        if isScanResponse {
            set.pendingScanResponse = pending
            if let finished { set.scanResponseData = finished }
        } else {
            set.pendingData = pending
            if let finished { set.data = finished }
        }
        controllers[id]?.advertisingSets[command.advertisingHandle] = set
        complete(id, opcode, .success)
    }

    mutating func setExtendedAdvertisingEnable(_ command: LESetExtendedAdvertisingEnableCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        guard command.enable else {
            // No sets: every set stops (7.8.56).
            let handles = command.sets.isEmpty ? Array(state.advertisingSets.keys) : command.sets.map(\.advertisingHandle)
            guard handles.allSatisfy({ state.advertisingSets[$0] != nil }) else {
                complete(id, opcode, .unknownAdvertisingIdentifier)
                return
            }
            for handle in handles { stopAdvertisingSet(handle, of: id) }
            complete(id, opcode, .success)
            return
        }
        var addresses: [UInt8: DeviceAddress] = [:]
        var connectable = 0
        for entry in command.sets {
            guard let set = state.advertisingSets[entry.advertisingHandle] else {
                complete(id, opcode, .unknownAdvertisingIdentifier)
                return
            }
            let properties = set.parameters.properties
            // A scannable extended set needs its scan response; fragments must be finished;
            // a duration-limited high duty cycle set is refused (7.8.56).
            if set.pendingData != nil || set.pendingScanResponse != nil
                || (!properties.contains(.legacy) && properties.contains(.scannable) && set.scanResponseData.isEmpty) {
                complete(id, opcode, .commandDisallowed)
                return
            }
            let address: DeviceAddress?
            switch set.parameters.ownAddressType {
            case .public, .resolvableOrPublic: address = state.ownAddress(.public)
            case .random, .resolvableOrRandom: address = set.randomAddress.map { DeviceAddress($0, type: .random) }
            }
            guard let address else {
                complete(id, opcode, .invalidCommandParameters)
                return
            }
            addresses[entry.advertisingHandle] = address
            if properties.contains(.connectable) { connectable += 1 }
        }
        if connectable > 0, state.connections.count >= state.configuration.maximumConnections {
            complete(id, opcode, .connectionLimitExceeded)
            return
        }
        for entry in command.sets {
            guard var set = controllers[id]?.advertisingSets[entry.advertisingHandle] else { continue }
            timers.cancel(set.timer)
            set.isEnabled = true
            set.address = addresses[entry.advertisingHandle]
            set.deadline = entry.duration == 0 ? nil : now + RadioTiming.tenMilliseconds(entry.duration)
            set.maximumEvents = Int(entry.maxExtendedAdvertisingEvents)
            set.completedEvents = 0
            set.timer = timers.schedule(at: now + RadioTiming.advertisingDelay(using: &random),
                                        .advertisingSetEvent(id, entry.advertisingHandle))
            controllers[id]?.advertisingSets[entry.advertisingHandle] = set
            logger.debug("controller \(id): advertising set \(entry.advertisingHandle) \(set.parameters.properties) on, \(set.data.count) octets")
        }
        complete(id, opcode, .success)
    }

    mutating func removeAdvertisingSet(_ command: LERemoveAdvertisingSetCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let set = controllers[id]?.advertisingSets[command.advertisingHandle] else {
            complete(id, opcode, .unknownAdvertisingIdentifier)
            return
        }
        // 7.8.59: not while it advertises.
        guard !set.isEnabled else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        controllers[id]?.advertisingSets[command.advertisingHandle] = nil
        complete(id, opcode, .success)
    }

    mutating func clearAdvertisingSets(opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        // 7.8.60: not while any set advertises.
        guard !state.advertisingSets.values.contains(where: \.isEnabled) else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        controllers[id]?.advertisingSets.removeAll()
        complete(id, opcode, .success)
    }

    mutating func stopAdvertisingSet(_ handle: UInt8, of id: ControllerID) {
        timers.cancel(controllers[id]?.advertisingSets[handle]?.timer)
        controllers[id]?.advertisingSets[handle]?.timer = nil
        controllers[id]?.advertisingSets[handle]?.isEnabled = false
    }

    /// The set stopped on its own: LE Advertising Set Terminated (7.7.65.18).
    mutating func terminateAdvertisingSet(_ handle: UInt8, of id: ControllerID, status: HCIStatus, connectionHandle: UInt16 = 0) {
        guard let set = controllers[id]?.advertisingSets[handle], set.isEnabled else { return }
        stopAdvertisingSet(handle, of: id)
        emit(.advertisingSetTerminated(LEAdvertisingSetTerminatedEvent(
            status: status, advertisingHandle: handle, connectionHandle: connectionHandle,
            numCompletedExtendedAdvertisingEvents: UInt8(clamping: set.completedEvents))), to: id)
    }

    /// One extended advertising event of a set: its duration and event limit are checked,
    /// its PDUs heard by every scanner and initiator in range, and the next event scheduled
    /// advInterval + advDelay later (Core 6.0, Vol 6, Part B, 4.4.2.2).
    mutating func runAdvertisingSetEvent(_ id: ControllerID, handle: UInt8) {
        guard let state = controllers[id], let set = state.advertisingSets[handle], set.isEnabled, let address = set.address else { return }
        controllers[id]?.advertisingSets[handle]?.timer = nil
        if let deadline = set.deadline, now >= deadline {
            terminateAdvertisingSet(handle, of: id, status: .advertisingTimeout)
            return
        }
        let air = AirAdvertisement(set: set, address: address, txPower: state.configuration.txPower)
        let others = controllers.keys.filter { $0 != id }.sorted()
        for listener in others {
            deliverAdvertisement(air, from: id, to: listener)
        }
        for initiator in others where offerConnection(air, from: id, to: initiator) {
            return
        }
        controllers[id]?.advertisingSets[handle]?.completedEvents += 1
        if set.maximumEvents > 0, set.completedEvents + 1 >= set.maximumEvents {
            terminateAdvertisingSet(handle, of: id, status: .limitReached)
            return
        }
        let interval = Duration.microseconds(625 * Int64(set.parameters.primaryIntervalMin))
        var next = now + interval + RadioTiming.advertisingDelay(using: &random)
        if let deadline = set.deadline { next = min(next, deadline) }
        controllers[id]?.advertisingSets[handle]?.timer = timers.schedule(at: next, .advertisingSetEvent(id, handle))
    }
}
