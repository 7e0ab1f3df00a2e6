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
}

/// Everything the controller is told to advertise: checked and encoded.
struct AdvertisingConfiguration: Sendable, Equatable {
    var parameters: AdvertisingParameters
    var data: [UInt8]
    var scanResponse: [UInt8]

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
    /// scan response, enable. Advertising that is on is replaced.
    ///
    /// Throws ``HostError/invalidArgument(_:)`` naming the problem when the data or the scan
    /// response does not fit in 31 octets, or the parameters are out of range.
    public func startAdvertising(_ data: AdvertisingData, scanResponse: AdvertisingData? = nil,
                                 parameters: AdvertisingParameters = AdvertisingParameters()) async throws {
        try requirePoweredOn()
        await waitForControllerRecovery()
        var parameters = parameters
        parameters.ownAddressType = ownAddressType(for: parameters.ownAddressType)
        let configuration = try AdvertisingConfiguration(data: data, scanResponse: scanResponse, parameters: parameters)
        let gate = advertising.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        if advertising.isEnabled {
            // Parameters cannot change while advertising (Command Disallowed, Vol 4, Part E, 7.8.5).
            _ = try await send(LESetAdvertisingEnableCommand(enable: false))
            advertising.didStop()
        }
        _ = try await send(configuration.parametersCommand)
        _ = try await send(configuration.dataCommand)
        if configuration.parameters.hasScanResponse { _ = try await send(configuration.scanResponseCommand) }
        _ = try await send(LESetAdvertisingEnableCommand(enable: true))
        advertising.didStart(configuration)
        logger.info("advertising (\(parameters.advertisingType), \(configuration.data.count) + \(configuration.scanResponse.count) octets)")
    }

    /// Advertises an iBeacon: non-connectable, non-scannable, the beacon's 30 octets.
    public func startAdvertising(beacon: IBeacon, intervalRange: ClosedRange<UInt16> = 0x00A0...0x00A0) async throws {
        try await startAdvertising(beacon.advertisingData,
                                   parameters: AdvertisingParameters(intervalRange: intervalRange, isConnectable: false, isScannable: false))
    }

    /// Stops advertising; also cancels a pending restart after disconnection.
    public func stopAdvertising() async throws {
        let gate = advertising.gate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        let wasEnabled = advertising.isEnabled
        advertising.didStop()
        guard wasEnabled, transportClosure == nil else { return }
        _ = try await send(LESetAdvertisingEnableCommand(enable: false))
        logger.info("advertising stopped")
    }

    /// Whether the controller is advertising now (never once the transport is gone).
    public var isAdvertising: Bool { advertising.isEnabled && transportClosure == nil }

    /// A central connected to this device while it advertised.
    func advertisingDidConnect(_ connection: Connection) {
        if advertising.didConnect(handle: connection.handle) {
            logger.debug("advertising ended: \(connection.peer) connected")
        }
    }

    /// A connection ended: advertise again if it came through advertising that asked for it.
    func advertisingDidDisconnect(_ connection: Connection) {
        guard advertising.didDisconnect(handle: connection.handle) != nil else { return }
        Task { await self.restartAdvertising() }
    }

    private func restartAdvertising() async {
        let gate = advertising.gate
        do { try await gate.enter() } catch { return }
        defer { gate.leave() }
        // Stopped or replaced meanwhile.
        guard advertising.configuration != nil, !advertising.isEnabled, transportClosure == nil else { return }
        do {
            // The controller keeps the parameters and data (Core 6.0, Vol 4, Part E, 7.8.5 to 7.8.8).
            _ = try await send(LESetAdvertisingEnableCommand(enable: true))
            advertising.didRestart()
            logger.info("advertising again after a disconnection")
        } catch {
            logger.error("could not advertise again after a disconnection: \(error)")
        }
    }
}
