import BluetoothCore
import BluetoothHCI

extension LinkSimulation {
    mutating func setAdvertisingParameters(_ command: LESetAdvertisingParametersCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        // Core 6.0, Vol 4, Part E, 7.8.5: not while advertising is enabled.
        guard !state.advertising.isEnabled else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        // High duty cycle directed advertising ignores the intervals.
        let intervalsValid = command.advertisingType == .advDirectIndHigh
            || ParameterRanges.advertising(intervalMin: command.intervalMin, intervalMax: command.intervalMax)
        guard intervalsValid, !command.channelMap.intersection(.all).isEmpty else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        controllers[id]?.advertising.parameters = command
        complete(id, opcode, .success)
    }

    mutating func setAdvertisingEnable(_ command: LESetAdvertisingEnableCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        guard command.enable else {
            stopAdvertising(id)
            complete(id, opcode, .success)
            return
        }
        // Enabling again while enabled is allowed and changes nothing (7.8.9).
        guard !state.advertising.isEnabled else {
            complete(id, opcode, .success)
            return
        }
        let parameters = state.advertising.parameters
        // A random own address needs LE Set Random Address first (7.8.9).
        guard let address = state.ownAddress(parameters.ownAddressType) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let connectable = parameters.advertisingType == .advInd || parameters.advertisingType == .advDirectIndHigh
            || parameters.advertisingType == .advDirectIndLow
        if connectable, state.connections.count >= state.configuration.maximumConnections {
            complete(id, opcode, .connectionLimitExceeded)
            return
        }
        controllers[id]?.advertising.isEnabled = true
        controllers[id]?.advertising.address = address
        controllers[id]?.advertising.enabledAt = now
        let first = parameters.advertisingType == .advDirectIndHigh ? now : now + RadioTiming.advertisingDelay(using: &random)
        controllers[id]?.advertising.timer = timers.schedule(at: first, .advertisingEvent(id))
        complete(id, opcode, .success)
        logger.debug("controller \(id): advertising \(parameters.advertisingType) as \(address) every \(RadioTiming.slots(parameters.intervalMin))")
    }

    mutating func stopAdvertising(_ id: ControllerID) {
        timers.cancel(controllers[id]?.advertising.timer)
        controllers[id]?.advertising.timer = nil
        controllers[id]?.advertising.isEnabled = false
    }

    /// One advertising event: the PDU goes out on the advertising channels, every scanner and
    /// initiator in range that is listening hears it, then the next event is scheduled
    /// advInterval + advDelay later (Core 6.0, Vol 6, Part B, 4.4.2.2).
    mutating func runAdvertisingEvent(_ id: ControllerID) {
        guard let state = controllers[id], state.advertising.isEnabled, let address = state.advertising.address else { return }
        controllers[id]?.advertising.timer = nil
        let parameters = state.advertising.parameters
        if parameters.advertisingType == .advDirectIndHigh, now - state.advertising.enabledAt >= RadioTiming.highDutyCycleDuration {
            // Core 6.0, Vol 4, Part E, 7.8.9: high duty cycle directed advertising that
            // found no initiator ends with a connection complete event, Advertising Timeout.
            stopAdvertising(id)
            emitConnectionComplete(to: id, status: .advertisingTimeout, handle: 0, role: .peripheral, peer: DeviceAddress(.zero, type: .public),
                                   parameters: LinkParameters(interval: 0, latency: 0, timeout: 0))
            return
        }
        let air = AirAdvertisement(legacy: parameters, address: address, data: state.advertising.data,
                                   scanResponse: state.advertising.scanResponseData)
        let others = controllers.keys.filter { $0 != id }.sorted()
        for listener in others {
            deliverAdvertisement(air, from: id, to: listener)
        }
        for initiator in others where offerConnection(air, from: id, to: initiator) {
            return
        }
        let next = parameters.advertisingType == .advDirectIndHigh
            ? RadioTiming.highDutyCycleInterval
            : RadioTiming.slots(parameters.intervalMin) + RadioTiming.advertisingDelay(using: &random)
        controllers[id]?.advertising.timer = timers.schedule(at: now + next, .advertisingEvent(id))
    }
}
