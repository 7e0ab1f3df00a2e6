import BluetoothCore
import BluetoothHCI

extension LinkSimulation {
    mutating func setScanParameters(_ command: LESetScanParametersCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        // Core 6.0, Vol 4, Part E, 7.8.10: not while scanning is enabled.
        guard !state.scanning.isEnabled else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        guard ParameterRanges.legacyScan(interval: command.scanInterval, window: command.scanWindow) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        controllers[id]?.scanning.legacyParameters = command
        complete(id, opcode, .success)
    }

    mutating func setScanEnable(_ command: LESetScanEnableCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        guard command.enable else {
            stopScanning(id)
            complete(id, opcode, .success)
            return
        }
        if state.scanning.isEnabled {
            // Enabling again is allowed: only a new Filter_Duplicates takes effect (7.8.11).
            controllers[id]?.scanning.filterDuplicates = command.filterDuplicates
            complete(id, opcode, .success)
            return
        }
        let parameters = state.scanning.legacyParameters
        guard let address = state.ownAddress(parameters.ownAddressType) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        startScanning(id, extended: false, active: parameters.scanType == .active, filterDuplicates: command.filterDuplicates,
                      policy: parameters.filterPolicy, address: address,
                      interval: RadioTiming.slots(parameters.scanInterval), window: RadioTiming.slots(parameters.scanWindow))
        complete(id, opcode, .success)
    }

    mutating func setExtendedScanParameters(_ command: LESetExtendedScanParametersCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        guard !state.scanning.isEnabled else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        // LE Coded is scanned only by a controller with the LE Coded PHY feature (7.8.64).
        if command.leCoded != nil, !state.supportedPHYs.contains(.leCoded) {
            complete(id, opcode, .unsupportedFeatureOrParameter)
            return
        }
        guard let phy = command.le1M ?? command.leCoded else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        guard ParameterRanges.extendedScan(interval: phy.scanInterval, window: phy.scanWindow) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        controllers[id]?.scanning.extendedParameters = command
        complete(id, opcode, .success)
    }

    mutating func setExtendedScanEnable(_ command: LESetExtendedScanEnableCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        guard command.enable else {
            stopScanning(id)
            complete(id, opcode, .success)
            return
        }
        // Core 6.0, Vol 4, Part E, 7.8.65: a duration must be shorter than the period.
        if command.duration != 0, command.period != 0,
           Int(command.duration) * 10 >= Int(command.period) * 1280 {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let parameters = state.scanning.extendedParameters
        guard let phy = parameters.le1M ?? parameters.leCoded, let address = state.ownAddress(parameters.ownAddressType) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let filterDuplicates = command.filterDuplicates != .disabled
        if state.scanning.isEnabled {
            // Enabling while enabled applies the new duplicate filter and duration (7.8.65).
            controllers[id]?.scanning.filterDuplicates = filterDuplicates
            controllers[id]?.scanning.duplicates.reset()
        } else {
            startScanning(id, extended: true, active: phy.scanType == .active, filterDuplicates: filterDuplicates,
                          policy: parameters.filterPolicy, address: address,
                          interval: RadioTiming.slots(phy.scanInterval), window: RadioTiming.slots(phy.scanWindow))
        }
        timers.cancel(controllers[id]?.scanning.timeoutTimer)
        controllers[id]?.scanning.timeoutTimer = command.duration == 0
            ? nil
            : timers.schedule(at: now + RadioTiming.tenMilliseconds(command.duration), .scanTimeout(id))
        complete(id, opcode, .success)
    }

    private mutating func startScanning(_ id: ControllerID, extended: Bool, active: Bool, filterDuplicates: Bool,
                                        policy: ScanningFilterPolicy, address: DeviceAddress, interval: Duration, window: Duration) {
        guard var scanning = controllers[id]?.scanning else { return }
        scanning.isEnabled = true
        scanning.usesExtendedReports = extended
        scanning.scannedPHYs = extended ? scanning.extendedParameters.scanningPHYs : .le1M
        scanning.isActive = active
        scanning.filterDuplicates = filterDuplicates
        scanning.filterPolicy = policy
        scanning.address = address
        scanning.schedule = ScanSchedule(start: now, interval: interval, window: window)
        scanning.duplicates.reset()
        controllers[id]?.scanning = scanning
        logger.debug("controller \(id): scanning (\(active ? "active" : "passive"), \(extended ? "extended" : "legacy"))")
    }

    mutating func stopScanning(_ id: ControllerID) {
        timers.cancel(controllers[id]?.scanning.timeoutTimer)
        controllers[id]?.scanning.timeoutTimer = nil
        controllers[id]?.scanning.isEnabled = false
    }

    /// Extended scanning with a duration ran out (Core 6.0, Vol 4, Part E, 7.8.65).
    mutating func scanDidTimeOut(_ id: ControllerID) {
        guard controllers[id]?.scanning.isEnabled == true else { return }
        controllers[id]?.scanning.timeoutTimer = nil
        stopScanning(id)
        emit(.scanTimeout, to: id)
    }

    /// A scanner hears one advertising event: it reports the PDU and, scanning actively a
    /// scannable advertiser, sends SCAN_REQ (AUX_SCAN_REQ) and reports the response that
    /// answers it (Core 6.0, Vol 6, Part B, 4.4.3.2). Legacy scanning hears legacy PDUs only;
    /// extended advertising on LE Coded is heard by scanning on LE Coded only.
    mutating func deliverAdvertisement(_ air: AirAdvertisement, from advertiser: ControllerID, to listener: ControllerID) {
        guard let scanner = controllers[listener], scanner.scanning.isEnabled,
              scanner.scanning.schedule.isListening(at: now) else { return }
        guard air.isLegacy || scanner.scanning.usesExtendedReports else { return }
        guard scanner.scanning.scannedPHYs.contains(air.primaryPHY == .leCoded ? .leCoded : .le1M) else { return }
        let heard = reception(from: advertiser, to: listener)
        guard heard.isReceived else { return }
        // The Filter Accept List is always empty here: filtering policies accept nothing.
        guard scanner.scanning.filterPolicy == .basicUnfiltered || scanner.scanning.filterPolicy == .extendedUnfiltered else { return }
        if air.isDirected, !(air.directAddress.map { scanner.owns($0.address) } ?? false) { return }
        // A bonded peer's identity address is ignored in network privacy mode (Vol 6, Part B, 4.7).
        if scanner.resolution(of: air.address) == .ignored { return }
        report(air, isScanResponse: false, rssi: heard.reportedRSSI, to: listener)

        guard scanner.scanning.isActive, air.isScannable, reception(from: listener, to: advertiser).isReceived else { return }
        report(air, isScanResponse: true, rssi: heard.reportedRSSI, to: listener)
    }

    /// One advertising PDU in the form the scanner's host asked for: legacy LE Advertising
    /// Report, or LE Extended Advertising Reports (Core 6.0, Vol 4, Part E, 7.7.65.13, Table
    /// 7.1 for legacy PDUs). Data longer than one report carries goes in several, each but
    /// the last with data status "incomplete, more to come", as a controller reports a chain.
    private mutating func report(_ air: AirAdvertisement, isScanResponse: Bool, rssi: Int8, to listener: ControllerID) {
        guard var scanning = controllers[listener]?.scanning else { return }
        if scanning.filterDuplicates {
            guard scanning.duplicates.admit(air.address, isScanResponse: isScanResponse, sid: air.sid) else { return }
            controllers[listener]?.scanning = scanning
        }
        let data = isScanResponse ? air.scanResponse : air.data
        // A private address the resolving list resolves is reported as its identity, with type
        // 0x02 or 0x03 (Core 6.0, Vol 4, Part E, 7.7.65.2).
        let advertiser = controllers[listener]?.resolution(of: air.address).reported(air.address) ?? air.address
        guard scanning.usesExtendedReports else {
            let report = LEAdvertisingReportEvent.Report(eventType: air.legacyReportType(isScanResponse: isScanResponse),
                                                         addressType: advertiser.type, address: advertiser.address, data: data, rssi: rssi)
            emit(.advertisingReport(LEAdvertisingReportEvent(reports: [report])), to: listener)
            return
        }
        let eventType = air.reportEventType(isScanResponse: isScanResponse)
        var offset = 0
        repeat {
            let end = min(offset + AirAdvertisement.reportDataLimit, data.count)
            let report = LEExtendedAdvertisingReportEvent.Report(
                eventType: eventType, dataStatus: end < data.count ? .incompleteMoreToCome : .complete,
                addressType: ExtendedReportAddressType(advertiser.type), address: advertiser.address,
                primaryPHY: air.primaryPHY, secondaryPHY: air.secondaryPHY, advertisingSID: air.sid, txPower: air.txPower,
                rssi: rssi, directAddressType: ExtendedReportAddressType(air.directAddress?.type ?? .public),
                directAddress: air.directAddress?.address ?? .zero, data: Array(data[offset..<end]))
            emit(.extendedAdvertisingReport(LEExtendedAdvertisingReportEvent(reports: [report])), to: listener)
            offset = end
        } while offset < data.count
    }
}
