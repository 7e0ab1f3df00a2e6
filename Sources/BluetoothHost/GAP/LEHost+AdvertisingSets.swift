import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// Whether this host advertises with extended advertising sets: the controller has LE
    /// Extended Advertising (LE feature bit 12) and the host drives it with the extended
    /// commands (`ControllerInfo/commandFamily`); otherwise ``startAdvertisingSet(_:scanResponse:parameters:)``
    /// falls back on legacy advertising when the set allows it.
    public var supportsExtendedAdvertising: Bool { controllerInfo?.commandFamily == .extended }

    /// Starts an advertising set (Core 6.0, Vol 4, Part E, 7.8.53-7.8.56): parameters, data
    /// and scan response (fragmented by the host past 251 octets), enable with the set's
    /// duration and event limit. Several sets run at once, each with its own data of up to
    /// the controller's maximum (LE Read Maximum Advertising Data Length).
    ///
    /// Without extended advertising in the controller, a set that legacy advertising can
    /// carry (31 octets, LE 1M, no duration or event limit) runs on the legacy commands, one
    /// at a time; otherwise this throws ``HostError/unsupported(_:)``. Throws
    /// ``HostError/invalidArgument(_:)`` naming what does not fit, and
    /// ``HostError/unsupported(_:)`` when the controller has no room for another set.
    public func startAdvertisingSet(_ data: AdvertisingData, scanResponse: AdvertisingData? = nil,
                                    parameters: ExtendedAdvertisingParameters = ExtendedAdvertisingParameters()) async throws -> AdvertisingSet {
        try requirePoweredOn()
        await waitForControllerRecovery()
        guard supportsExtendedAdvertising else {
            return try await startLegacyFallbackSet(data, scanResponse: scanResponse, parameters: parameters)
        }
        return try await withAddressingGate {
            try await startAdvertisingSetInGate(data, scanResponse: scanResponse, parameters: parameters)
        }
    }

    private func startAdvertisingSetInGate(_ data: AdvertisingData, scanResponse: AdvertisingData?,
                                           parameters: ExtendedAdvertisingParameters) async throws -> AdvertisingSet {
        let gate = advertisingSetsState.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        try await readAdvertisingSetCapabilities()
        guard let handle = advertisingSetsState.freeHandle() else {
            throw HostError.unsupported("the controller runs at most \(advertisingSetsState.supportedSetCount ?? 0) advertising set(s), all in use")
        }
        var parameters = parameters
        parameters.ownAddressType = ownAddressType(for: parameters.ownAddressType)
        let configuration = try AdvertisingSetConfiguration(
            handle: handle, data: data, scanResponse: scanResponse, parameters: parameters,
            maximumDataLength: advertisingSetsState.maximumDataLength ?? AdvertisingData.legacyMaximumLength)
        _ = try await send(configuration.parametersCommand)
        do {
            try await setRandomAddress(ofSet: handle, ownAddressType: parameters.ownAddressType)
            for command in configuration.dataCommands { _ = try await send(command) }
            for command in configuration.scanResponseCommands { _ = try await send(command) }
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: true, sets: [configuration.enableEntry]))
        } catch {
            // Leave no half-made set behind in the controller.
            _ = try? await send(LERemoveAdvertisingSetCommand(advertisingHandle: handle))
            addressRotation?.forgetSet(handle)
            throw error
        }
        advertisingSetsState.didStart(configuration)
        logger.info("advertising set \(handle): \(parameters.properties), \(configuration.data.count) + \(configuration.scanResponse.count) octets, \(parameters.primaryPHY)/\(parameters.secondaryPHY)")
        return AdvertisingSet(handle: handle)
    }

    /// Stops an advertising set and removes it from the controller (7.8.56, 7.8.59). A set
    /// that already ended (duration, event limit, connection) is only removed.
    public func stopAdvertisingSet(_ set: AdvertisingSet) async throws {
        if set.isLegacyFallback {
            try await stopAdvertising()
            return
        }
        try await withAddressingGate { try await stopAdvertisingSetInGate(set) }
    }

    private func stopAdvertisingSetInGate(_ set: AdvertisingSet) async throws {
        let gate = advertisingSetsState.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        let wasEnabled = advertisingSetsState.enabled.contains(set.handle)
        let wasKnown = advertisingSetsState.sets[set.handle] != nil
        advertisingSetsState.didRemove(set.handle)
        addressRotation?.forgetSet(set.handle)
        guard wasKnown, transportClosure == nil else { return }
        if wasEnabled {
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: false, sets: [.init(advertisingHandle: set.handle)]))
        }
        _ = try await send(LERemoveAdvertisingSetCommand(advertisingHandle: set.handle))
        logger.info("advertising set \(set.handle) stopped")
    }

    /// Stops every advertising set and clears them from the controller (7.8.56 with no sets,
    /// 7.8.60). Legacy advertising (``startAdvertising(_:scanResponse:parameters:)``) goes on,
    /// on its own set when the controller is driven with the extended commands: the others are
    /// then stopped and removed one by one.
    public func stopAllAdvertisingSets() async throws {
        try await withAddressingGate { try await stopAllAdvertisingSetsInGate() }
    }

    private func stopAllAdvertisingSetsInGate() async throws {
        let gate = advertisingSetsState.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        let handles = advertisingSetsState.sets.keys.sorted()
        let enabled = advertisingSetsState.enabled.sorted()
        advertisingSetsState.didRemoveAll()
        for handle in handles { addressRotation?.forgetSet(handle) }
        guard !handles.isEmpty, transportClosure == nil, supportsExtendedAdvertising else { return }
        guard advertisingSetsState.legacyAdvertisingHandle != nil else {
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: false, sets: []))
            _ = try await send(LEClearAdvertisingSetsCommand())
            return
        }
        if !enabled.isEmpty {
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: false, sets: enabled.map { .init(advertisingHandle: $0) }))
        }
        for handle in handles { _ = try await send(LERemoveAdvertisingSetCommand(advertisingHandle: handle)) }
    }

    /// The advertising sets advertising now, by handle.
    public var activeAdvertisingSets: [AdvertisingSet] {
        guard transportClosure == nil else { return [] }
        return advertisingSetsState.enabled.sorted().map { AdvertisingSet(handle: $0) }
    }

    /// The most advertising (or scan response) data one set carries: the controller's
    /// Max_Advertising_Data_Length (7.8.57), 31 without extended advertising.
    public func maximumAdvertisingDataLength() async throws -> Int {
        try requirePoweredOn()
        guard supportsExtendedAdvertising else { return AdvertisingData.legacyMaximumLength }
        try await readAdvertisingSetCapabilities()
        return advertisingSetsState.maximumDataLength ?? AdvertisingData.legacyMaximumLength
    }

    /// A new stream of the advertising sets that ended on their own: a central connected,
    /// the duration ran out, or the event limit was reached. It ends when the transport closes.
    public func advertisingSetTerminations() -> AsyncStream<AdvertisingSetTermination> {
        advertisingSetTerminationListeners.makeStream()
    }

    /// Reads the controller's data length limit and set count once (7.8.57, 7.8.58).
    func readAdvertisingSetCapabilities() async throws(HostError) {
        if advertisingSetsState.maximumDataLength == nil {
            let length = controllerInfo?.supports(.leReadMaximumAdvertisingDataLength) == true
                ? Int(try await send(LEReadMaximumAdvertisingDataLengthCommand()).maximumAdvertisingDataLength)
                : AdvertisingData.legacyMaximumLength
            advertisingSetsState.maximumDataLength = length
        }
        if advertisingSetsState.supportedSetCount == nil {
            let count = controllerInfo?.supports(.leReadNumberOfSupportedAdvertisingSets) == true
                ? Int(try await send(LEReadNumberOfSupportedAdvertisingSetsCommand()).numSupportedAdvertisingSets)
                : 1
            advertisingSetsState.supportedSetCount = count
        }
    }

    /// A controller without extended advertising: legacy advertising, if it can carry the set.
    private func startLegacyFallbackSet(_ data: AdvertisingData, scanResponse: AdvertisingData?,
                                        parameters: ExtendedAdvertisingParameters) async throws -> AdvertisingSet {
        let configuration = try AdvertisingSetConfiguration(
            handle: 0, data: data, scanResponse: scanResponse, parameters: parameters, maximumDataLength: AdvertisingData.legacyMaximumLength)
        guard let legacy = configuration.legacyFallback else {
            throw HostError.unsupported("the controller has no extended advertising (LE feature bit 12): only 31 octets on LE 1M, with no duration or event limit")
        }
        guard !isAdvertising else {
            throw HostError.unsupported("the controller has no extended advertising: one advertisement at a time, and one is on")
        }
        try await startAdvertising(data, scanResponse: scanResponse, parameters: legacy)
        return AdvertisingSet(handle: 0, isLegacyFallback: true)
    }

    /// LE Advertising Set Terminated (Core 6.0, Vol 4, Part E, 7.7.65.18). On a connection
    /// it follows the connection complete event, so the connection is already known.
    func advertisingSetDidTerminate(_ event: LEAdvertisingSetTerminatedEvent) {
        if event.status.isSuccess, let connection = connection(event.connectionHandle) {
            advertisingSetDidConnect(connection, handle: event.advertisingHandle)
        }
        if event.advertisingHandle == advertising.setHandle {
            legacyAdvertisingSetDidTerminate(event)
            return
        }
        guard advertisingSetsState.didTerminate(event.advertisingHandle) else {
            logger.debug("advertising set \(event.advertisingHandle) ended, not one of this host's: \(event)")
            return
        }
        // Its handle is free for another set, which must not advertise from this one's address.
        addressRotation?.forgetSet(event.advertisingHandle)
        let reason: AdvertisingSetTermination.Reason
        switch event.status {
        case .success:
            guard let connection = connection(event.connectionHandle) else {
                logger.debug("advertising set \(event.advertisingHandle) ended with connection \(event.connectionHandle), already gone")
                return
            }
            reason = .connected(connection)
        case .advertisingTimeout: reason = .timeout
        case .limitReached: reason = .limitReached
        default: reason = .other(event.status)
        }
        let termination = AdvertisingSetTermination(set: AdvertisingSet(handle: event.advertisingHandle), reason: reason,
                                                    completedEvents: Int(event.numCompletedExtendedAdvertisingEvents))
        logger.info("\(termination)")
        advertisingSetTerminationListeners.yield(termination)
    }
}
