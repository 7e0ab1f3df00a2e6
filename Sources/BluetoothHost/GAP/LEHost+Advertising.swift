import BluetoothCore
import BluetoothHCI

/// How to advertise with legacy advertising PDUs (Core 6.0, Vol 4, Part E, 7.8.5).
public struct AdvertisingParameters: Sendable, Hashable {
    /// Units of 0.625 ms, 0x0020 (20 ms) to 0x4000 (10.24 s). The default, 100 to 150 ms,
    /// is quick to find without flooding the channels.
    public var intervalRange: ClosedRange<UInt16> = 0x00A0...0x00F0
    /// Whether centrals may connect (ADV_IND); otherwise ADV_SCAN_IND or ADV_NONCONN_IND.
    public var isConnectable = true
    /// Whether scanners may ask for the scan response. Connectable advertising is always scannable.
    public var isScannable = true
    public var ownAddressType: OwnAddressType = .public
    public var channelMap: AdvertisingChannelMap = .all
    public var filterPolicy: AdvertisingFilterPolicy = .acceptAll
    /// Advertise again, with the same data, when a central that connected through this
    /// advertising disconnects. The controller stops legacy advertising when a central
    /// connects (Core 6.0, Vol 4, Part E, 7.8.9).
    public var restartsAfterDisconnection = false

    public init(intervalRange: ClosedRange<UInt16> = 0x00A0...0x00F0, isConnectable: Bool = true, isScannable: Bool = true,
                restartsAfterDisconnection: Bool = false) {
        self.intervalRange = intervalRange
        self.isConnectable = isConnectable
        self.isScannable = isScannable
        self.restartsAfterDisconnection = restartsAfterDisconnection
    }

    /// The legacy PDU type these parameters ask for.
    public var advertisingType: AdvertisingType {
        if isConnectable { return .advInd }
        return isScannable ? .advScanInd : .advNonconnInd
    }

    /// Whether a scanner can get a scan response.
    var hasScanResponse: Bool { isConnectable || isScannable }

    /// The range LE Set Advertising Parameters accepts (Core 6.0, Vol 4, Part E, 7.8.5).
    public static let intervalLimits: ClosedRange<UInt16> = 0x0020...0x4000

    /// The same advertising as an advertising set with legacy PDUs, for a controller on which
    /// the host uses the extended commands (Core 6.0, Vol 4, Part E, 7.8.53: legacy PDU event
    /// properties ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND).
    var legacyPDUSet: ExtendedAdvertisingParameters {
        var set = ExtendedAdvertisingParameters(intervalRange: UInt32(intervalRange.lowerBound)...UInt32(intervalRange.upperBound),
                                                isConnectable: isConnectable, isScannable: hasScanResponse, usesLegacyPDUs: true)
        set.ownAddressType = ownAddressType
        set.channelMap = channelMap
        set.filterPolicy = filterPolicy
        return set
    }
}

/// Everything the controller is told to advertise: checked and encoded.
struct AdvertisingConfiguration: Sendable, Equatable {
    var parameters: AdvertisingParameters
    var data: [UInt8]
    var scanResponse: [UInt8]
    /// The same, as an advertising set with legacy PDUs (a controller that uses the extended
    /// commands), once it has a handle.
    var set: AdvertisingSetConfiguration?

    /// Encodes the data and checks the parameters; a `HostError.invalidArgument` says what
    /// does not fit.
    init(data: AdvertisingData, scanResponse: AdvertisingData?, parameters: AdvertisingParameters) throws(HostError) {
        guard AdvertisingParameters.intervalLimits.contains(parameters.intervalRange.lowerBound),
              AdvertisingParameters.intervalLimits.contains(parameters.intervalRange.upperBound) else {
            throw .invalidArgument("advertising interval \(parameters.intervalRange) is outside 0x0020...0x4000 (units of 0.625 ms)")
        }
        if let scanResponse, !scanResponse.structures.isEmpty, !parameters.hasScanResponse {
            throw .invalidArgument("non-connectable, non-scannable advertising has no scan response; make it scannable or drop the scan response")
        }
        do {
            self.data = try data.encoded(maximumLength: AdvertisingData.legacyMaximumLength)
        } catch {
            throw .invalidArgument("advertising data: \(error)")
        }
        do {
            self.scanResponse = try (scanResponse ?? AdvertisingData()).encoded(maximumLength: AdvertisingData.legacyMaximumLength)
        } catch {
            throw .invalidArgument("scan response data: \(error)")
        }
        self.parameters = parameters
    }

    var parametersCommand: LESetAdvertisingParametersCommand {
        LESetAdvertisingParametersCommand(
            intervalMin: parameters.intervalRange.lowerBound, intervalMax: parameters.intervalRange.upperBound,
            advertisingType: parameters.advertisingType, ownAddressType: parameters.ownAddressType,
            channelMap: parameters.channelMap, filterPolicy: parameters.filterPolicy)
    }

    var dataCommand: LESetAdvertisingDataCommand { LESetAdvertisingDataCommand(data: data) }
    var scanResponseCommand: LESetScanResponseDataCommand { LESetScanResponseDataCommand(data: scanResponse) }
}

/// Whether and how this host advertises (the peripheral role). A plain state machine: the
/// host sends the commands it decides on.
struct AdvertisingState: Sendable {
    /// What is advertised, or was until a central connected; `nil` once stopped.
    private(set) var configuration: AdvertisingConfiguration?
    /// The advertising set the advertising runs on, on a controller that uses the extended
    /// commands: created at the first start, kept (and reused) until stopped.
    var setHandle: UInt8?
    /// Whether the controller is advertising now.
    private(set) var isEnabled = false
    /// Connections centrals made through this advertising that are still up.
    private(set) var connectedHandles: Set<UInt16> = []
    /// Starting and stopping run one at a time.
    let gate = AsyncSerialGate()

    mutating func didStart(_ configuration: AdvertisingConfiguration) {
        self.configuration = configuration
        isEnabled = true
    }

    mutating func didStop() {
        configuration = nil
        isEnabled = false
    }

    /// A central connected to this device. If connectable advertising was on, the controller
    /// stopped it; returns whether that happened.
    @discardableResult
    mutating func didConnect(handle: UInt16) -> Bool {
        guard isEnabled, configuration?.parameters.isConnectable == true else { return false }
        isEnabled = false
        connectedHandles.insert(handle)
        return true
    }

    /// A connection ended. Returns the configuration to advertise with again when that
    /// central had connected through the advertising and a restart was asked for.
    mutating func didDisconnect(handle: UInt16) -> AdvertisingConfiguration? {
        guard connectedHandles.remove(handle) != nil, !isEnabled, let configuration,
              configuration.parameters.restartsAfterDisconnection else { return nil }
        return configuration
    }

    /// The restart went through.
    mutating func didRestart() { isEnabled = configuration != nil }
}

extension LEHost {
    /// Starts legacy advertising (Core 6.0, Vol 4, Part E, 7.8.5 to 7.8.9): parameters, data,
    /// scan response, enable. Advertising that is on is replaced. On a controller the host
    /// drives with the extended commands (`ControllerInfo/commandFamily`), the same
    /// advertising runs on an advertising set with legacy PDUs, since the controller refuses
    /// the legacy commands once the extended ones were used (Vol 4, Part E, 3.1.1).
    ///
    /// Throws ``HostError/invalidArgument(_:)`` naming the problem when the data or the scan
    /// response does not fit in 31 octets, or the parameters are out of range.
    public func startAdvertising(_ data: AdvertisingData, scanResponse: AdvertisingData? = nil,
                                 parameters: AdvertisingParameters = AdvertisingParameters()) async throws {
        try requirePoweredOn()
        await waitForControllerRecovery()
        var parameters = parameters
        parameters.ownAddressType = ownAddressType(for: parameters.ownAddressType)
        var configuration = try AdvertisingConfiguration(data: data, scanResponse: scanResponse, parameters: parameters)
        try await withAddressingGate {
            try await startAdvertisingInGate(&configuration, parameters: parameters, data: data, scanResponse: scanResponse)
        }
    }

    private func startAdvertisingInGate(_ configuration: inout AdvertisingConfiguration, parameters: AdvertisingParameters,
                                        data: AdvertisingData, scanResponse: AdvertisingData?) async throws {
        let gate = advertising.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        if advertising.isEnabled {
            // Parameters cannot change while advertising (Command Disallowed, Vol 4, Part E, 7.8.5).
            try await enableAdvertising(false)
            advertising.didStop()
        }
        if controllerInfo?.commandFamily == .extended {
            configuration.set = try await startAdvertisingOnSet(data, scanResponse: scanResponse, parameters: parameters)
        } else {
            _ = try await send(configuration.parametersCommand)
            _ = try await send(configuration.dataCommand)
            if configuration.parameters.hasScanResponse { _ = try await send(configuration.scanResponseCommand) }
            _ = try await send(LESetAdvertisingEnableCommand(enable: true))
        }
        advertising.didStart(configuration)
        let where_ = advertising.setHandle.map { " on advertising set \($0), legacy PDUs" } ?? ""
        logger.info("advertising (\(parameters.advertisingType), \(configuration.data.count) + \(configuration.scanResponse.count) octets\(where_))")
    }

    /// Advertises an iBeacon: non-connectable, non-scannable, the beacon's 30 octets.
    public func startAdvertising(beacon: IBeacon, intervalRange: ClosedRange<UInt16> = 0x00A0...0x00A0) async throws {
        try await startAdvertising(beacon.advertisingData,
                                   parameters: AdvertisingParameters(intervalRange: intervalRange, isConnectable: false, isScannable: false))
    }

    /// Stops advertising; also cancels a pending restart after disconnection. On a controller
    /// driven with the extended commands, also removes the advertising set it ran on.
    public func stopAdvertising() async throws {
        try await withAddressingGate { try await stopAdvertisingInGate() }
    }

    private func stopAdvertisingInGate() async throws {
        let gate = advertising.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        let wasEnabled = advertising.isEnabled
        let handle = advertising.setHandle
        advertising.didStop()
        advertising.setHandle = nil
        advertisingSetsState.legacyAdvertisingHandle = nil
        if let handle { addressRotation?.forgetSet(handle) }
        guard transportClosure == nil else { return }
        if let handle {
            if wasEnabled {
                _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: false, sets: [.init(advertisingHandle: handle)]))
            }
            _ = try await send(LERemoveAdvertisingSetCommand(advertisingHandle: handle))
        } else if wasEnabled {
            _ = try await send(LESetAdvertisingEnableCommand(enable: false))
        } else {
            return
        }
        logger.info("advertising stopped")
    }

    /// Whether the controller is advertising now (never once the transport is gone).
    public var isAdvertising: Bool { advertising.isEnabled && transportClosure == nil }

    /// Creates (or replaces the parameters and data of) the advertising set legacy advertising
    /// runs on, and enables it (Core 6.0, Vol 4, Part E, 7.8.53-7.8.56).
    private func startAdvertisingOnSet(_ data: AdvertisingData, scanResponse: AdvertisingData?,
                                       parameters: AdvertisingParameters) async throws -> AdvertisingSetConfiguration {
        let setsGate = advertisingSetsState.gate
        do { try await setsGate.enter() } catch { throw HostError.cancelled }
        defer { setsGate.leave() }
        try await readAdvertisingSetCapabilities()
        guard let handle = advertising.setHandle ?? advertisingSetsState.freeHandle() else {
            throw HostError.unsupported("the controller runs at most \(advertisingSetsState.supportedSetCount ?? 0) advertising set(s), all in use")
        }
        let set = try AdvertisingSetConfiguration(handle: handle, data: data, scanResponse: scanResponse,
                                                  parameters: parameters.legacyPDUSet, maximumDataLength: AdvertisingData.legacyMaximumLength)
        advertising.setHandle = handle
        advertisingSetsState.legacyAdvertisingHandle = handle
        do {
            _ = try await send(set.parametersCommand)
            try await setRandomAddress(ofSet: handle, ownAddressType: set.parameters.ownAddressType)
            for command in set.dataCommands { _ = try await send(command) }
            for command in set.scanResponseCommands { _ = try await send(command) }
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: true, sets: [set.enableEntry]))
        } catch {
            // Leave no half-made set behind in the controller.
            _ = try? await send(LERemoveAdvertisingSetCommand(advertisingHandle: handle))
            advertising.setHandle = nil
            advertisingSetsState.legacyAdvertisingHandle = nil
            addressRotation?.forgetSet(handle)
            throw error
        }
        return set
    }

    /// Turns the advertising on or off: the legacy enable, or its advertising set's.
    private func enableAdvertising(_ enable: Bool) async throws(HostError) {
        if let handle = advertising.setHandle {
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: enable, sets: [.init(advertisingHandle: handle)]))
        } else {
            _ = try await send(LESetAdvertisingEnableCommand(enable: enable))
        }
    }

    /// A central connected to this device while it advertised. On a controller driven with the
    /// extended commands, the advertising set's LE Advertising Set Terminated says so instead
    /// (``advertisingSetDidConnect(handle:)``): another set may have taken the connection.
    func advertisingDidConnect(_ connection: Connection) {
        guard advertising.setHandle == nil else { return }
        if advertising.didConnect(handle: connection.handle) {
            logger.debug("advertising ended: \(connection.peer) connected")
        }
    }

    /// The advertising set of the legacy advertising ended: a central connected through it
    /// (Core 6.0, Vol 4, Part E, 7.7.65.18), or the controller stopped it.
    func legacyAdvertisingSetDidTerminate(_ event: LEAdvertisingSetTerminatedEvent) {
        if event.status.isSuccess, advertising.didConnect(handle: event.connectionHandle) {
            logger.debug("advertising ended: connection \(Hex.format(event.connectionHandle)) came through it")
        } else if !event.status.isSuccess {
            logger.warning("the controller ended the advertising: \(event.status)")
            advertising.didStop()
        }
    }

    /// A connection ended: advertise again if it came through advertising that asked for it.
    func advertisingDidDisconnect(_ connection: Connection) {
        guard advertising.didDisconnect(handle: connection.handle) != nil else { return }
        Task { await self.restartAdvertising() }
    }

    private func restartAdvertising() async {
        let gates = (addressingGate, advertising.gate)
        do { try await gates.0.enter() } catch { return }
        defer { gates.0.leave() }
        do { try await gates.1.enter() } catch { return }
        defer { gates.1.leave() }
        // Stopped or replaced meanwhile.
        guard advertising.configuration != nil, !advertising.isEnabled, transportClosure == nil else { return }
        do {
            // The controller keeps the parameters and data, of legacy advertising (Core 6.0,
            // Vol 4, Part E, 7.8.5 to 7.8.8) and of an advertising set (7.8.53 to 7.8.56).
            try await enableAdvertising(true)
            advertising.didRestart()
            logger.info("advertising again after a disconnection")
        } catch {
            logger.error("could not advertise again after a disconnection: \(error)")
        }
    }
}
