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
        // Only LE 1M is scanned; asking for LE Coded alone asks for an unsupported PHY (7.8.64).
        guard let le1M = command.le1M else {
            complete(id, opcode, state.supportedPHYs.contains(.leCoded) ? .invalidCommandParameters : .unsupportedFeatureOrParameter)
            return
        }
        guard ParameterRanges.extendedScan(interval: le1M.scanInterval, window: le1M.scanWindow) else {
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
        guard let le1M = parameters.le1M, let address = state.ownAddress(parameters.ownAddressType) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let filterDuplicates = command.filterDuplicates != .disabled
        if state.scanning.isEnabled {
            // Enabling while enabled applies the new duplicate filter and duration (7.8.65).
            controllers[id]?.scanning.filterDuplicates = filterDuplicates
            controllers[id]?.scanning.duplicates.reset()
        } else {
            startScanning(id, extended: true, active: le1M.scanType == .active, filterDuplicates: filterDuplicates,
                          policy: parameters.filterPolicy, address: address,
                          interval: RadioTiming.slots(le1M.scanInterval), window: RadioTiming.slots(le1M.scanWindow))
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
    /// scannable advertiser, sends SCAN_REQ and reports the SCAN_RSP that answers it
    /// (Core 6.0, Vol 6, Part B, 4.4.3.2).
    mutating func deliverAdvertisement(from advertiser: ControllerID, address: DeviceAddress,
                                       parameters: LESetAdvertisingParametersCommand, to listener: ControllerID) {
        guard let scanner = controllers[listener], scanner.scanning.isEnabled,
              scanner.scanning.schedule.isListening(at: now) else { return }
        let heard = reception(from: advertiser, to: listener)
        guard heard.isReceived else { return }
        // The Filter Accept List is always empty here: filtering policies accept nothing.
        guard scanner.scanning.filterPolicy == .basicUnfiltered || scanner.scanning.filterPolicy == .extendedUnfiltered else { return }
        let type = parameters.advertisingType
        let directed = type == .advDirectIndHigh || type == .advDirectIndLow
        if directed, !scanner.owns(parameters.peerAddress) { return }
        let data = directed ? [] : (controllers[advertiser]?.advertising.data ?? [])
        report(to: listener, from: address, type: type, isScanResponse: false, data: data, rssi: heard.reportedRSSI,
               directAddress: directed ? DeviceAddress(parameters.peerAddress, type: parameters.peerAddressType) : nil)

        let scannable = type == .advInd || type == .advScanInd
        guard scanner.scanning.isActive, scannable, reception(from: listener, to: advertiser).isReceived else { return }
        let response = controllers[advertiser]?.advertising.scanResponseData ?? []
        report(to: listener, from: address, type: type, isScanResponse: true, data: response, rssi: heard.reportedRSSI, directAddress: nil)
    }

    /// One advertising report in the form the scanner's host asked for: legacy LE Advertising
    /// Report, or LE Extended Advertising Report with the legacy event type bits
    /// (Core 6.0, Vol 4, Part E, 7.7.65.13, Table 7.1).
    private mutating func report(to listener: ControllerID, from address: DeviceAddress, type: AdvertisingType, isScanResponse: Bool,
                                 data: [UInt8], rssi: Int8, directAddress: DeviceAddress?) {
        guard var scanning = controllers[listener]?.scanning else { return }
        if scanning.filterDuplicates {
            guard scanning.duplicates.admit(address, isScanResponse: isScanResponse) else { return }
            controllers[listener]?.scanning = scanning
        }
        if scanning.usesExtendedReports {
            var eventType: ExtendedAdvertisingEventType = [.legacy]
            switch type {
            case .advInd: eventType.formUnion([.connectable, .scannable])
            case .advDirectIndHigh, .advDirectIndLow: eventType.formUnion([.connectable, .directed])
            case .advScanInd: eventType.insert(.scannable)
            case .advNonconnInd: break
            }
            if isScanResponse { eventType.insert(.scanResponse) }
            let report = LEExtendedAdvertisingReportEvent.Report(
                eventType: eventType, addressType: ExtendedReportAddressType(address.type), address: address.address,
                rssi: rssi, directAddressType: ExtendedReportAddressType(directAddress?.type ?? .public),
                directAddress: directAddress?.address ?? .zero, data: data)
            emit(.extendedAdvertisingReport(LEExtendedAdvertisingReportEvent(reports: [report])), to: listener)
        } else {
            let eventType: AdvertisingReportEventType
            if isScanResponse {
                eventType = .scanRsp
            } else {
                switch type {
                case .advInd: eventType = .advInd
                case .advDirectIndHigh, .advDirectIndLow: eventType = .advDirectInd
                case .advScanInd: eventType = .advScanInd
                case .advNonconnInd: eventType = .advNonconnInd
                }
            }
            let report = LEAdvertisingReportEvent.Report(eventType: eventType, addressType: address.type, address: address.address, data: data, rssi: rssi)
            emit(.advertisingReport(LEAdvertisingReportEvent(reports: [report])), to: listener)
        }
    }
}
