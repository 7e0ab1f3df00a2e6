import BluetoothCore
import BluetoothHCI

/// The scan that is running; there is at most one.
struct ScanState {
    let receiver: ScanReceiver
    let usesExtendedCommands: Bool
    /// The host's own scan for a bonded peer it connects to by identity (LEHost+Connecting.swift):
    /// an app's scan takes its place, and the connection attempt hears the peer through it.
    var isForConnection = false
}

extension LEHost {
    /// Starts scanning and returns the discoveries as they come. The scan stops when the
    /// stream's consumer stops iterating, when ``stopScanning()`` is called (the stream then
    /// finishes), or with an error when the transport closes.
    ///
    /// Only one scan runs at a time: a second call throws ``HostError/scanInProgress``.
    /// Duplicates are filtered by the host, not the controller, so that a peer's changed data
    /// and its scan response are still reported.
    public func scan(_ options: ScanOptions = ScanOptions()) async throws -> ValueStream<Advertisement> {
        let (stream, continuation) = ValueStream.makeStream(of: Advertisement.self, limit: Self.scanBufferLimit)
        let id = try await startScan(options, handler: { advertisements in
            if case let .dropped(count) = continuation.yield(contentsOf: advertisements) {
                self.logger.debug("the scan's consumer is behind: \(count) advertisement(s) dropped")
            }
        }, onEnd: { error in
            continuation.finish(throwing: error)
        })
        continuation.onTermination = { [weak self] in
            Task { [weak self] in await self?.endScan(id: id) }
        }
        return stream
    }

    /// How many advertisements a scan's stream holds for a consumer that falls behind; the
    /// newest are dropped past it (a scan reports again what it keeps hearing).
    public static let scanBufferLimit = 16_384

    /// Starts scanning; `handler` gets the advertisements of each batch the transport reads,
    /// in order, on the transport's reader thread (it must not block: hand them on), and
    /// `onEnd` is called once when the scan ends: `nil` after ``stopScanning()``, an error
    /// when the transport closes. Neither is called after `onEnd`.
    ///
    /// This is the scan without a stream in between: one call per batch, however many
    /// advertisements it holds. The same rules as ``scan(_:)`` apply.
    public func scan(_ options: ScanOptions = ScanOptions(), handler: @escaping @Sendable ([Advertisement]) -> Void,
                     onEnd: @escaping @Sendable (HostError?) -> Void = { _ in }) async throws {
        _ = try await startScan(options, handler: handler, onEnd: onEnd)
    }

    func startScan(_ options: ScanOptions, forConnection: Bool = false, handler: @escaping @Sendable ([Advertisement]) -> Void,
                   onEnd: @escaping @Sendable (HostError?) -> Void) async throws -> UInt64 {
        try requirePoweredOn()
        await waitForControllerRecovery()
        // The last scan's end may still be on its way to the controller (its disable goes from a
        // task of its own), and a controller that scans refuses new scan parameters with Command
        // Disallowed (Core 6.0, Vol 4, Part E, 7.8.10 and 7.8.64): a connection attempt right
        // after an app's scan ended failed so.
        await waitForScanDisable()
        if !forConnection, let running = scanState, running.isForConnection {
            // The app's scan takes the place of the host's; the attempt hears the peer through it.
            await endScan(id: running.receiver.id)
        }
        return try await withAddressingGate {
            try await startScanInGate(options, forConnection: forConnection, handler: handler, onEnd: onEnd)
        }
    }

    private func startScanInGate(_ options: ScanOptions, forConnection: Bool, handler: @escaping @Sendable ([Advertisement]) -> Void,
                                 onEnd: @escaping @Sendable (HostError?) -> Void) async throws -> UInt64 {
        guard scanState == nil else { throw HostError.scanInProgress }
        let id = makeIdentifier()
        let extended = controllerInfo?.commandFamily == .extended
        let ownAddressType = ownAddressTypeForScanningAndConnecting
        let receiver = ScanReceiver(id: id, options: options, logger: logger, resolver: addressResolver, handler: handler, onEnd: onEnd)
        scanState = ScanState(receiver: receiver, usesExtendedCommands: extended, isForConnection: forConnection)
        // In place before the controller starts, so that no report is missed.
        l2cap.setScanReceiver(receiver)
        do {
            let type: LEScanType = options.active ? .active : .passive
            if extended {
                let phy = LESetExtendedScanParametersCommand.PHYParameters(scanType: type, scanInterval: options.interval, scanWindow: options.window)
                let phys = options.phys.intersection([.le1M, .leCoded]).isEmpty ? [.le1M] : options.phys
                _ = try await send(LESetExtendedScanParametersCommand(
                    ownAddressType: ownAddressType, le1M: phys.contains(.le1M) ? phy : nil, leCoded: phys.contains(.leCoded) ? phy : nil))
                _ = try await send(LESetExtendedScanEnableCommand(enable: true))
            } else {
                _ = try await send(LESetScanParametersCommand(scanType: type, scanInterval: options.interval, scanWindow: options.window,
                                                              ownAddressType: ownAddressType))
                _ = try await send(LESetScanEnableCommand(enable: true, filterDuplicates: false))
            }
        } catch {
            if scanState?.receiver.id == id { removeScan() }
            receiver.finish(HostError.wrap(error))
            throw error
        }
        if scanState?.receiver.id != id {
            // Ended while it started (a connection attempt's scan hears its peer in reports the
            // controller sent before the last scan stopped): that stop's disable may have gone
            // before this enable, and the controller would scan on with nobody listening.
            await disableScanning(extendedCommands: extended)
            return id
        }
        logger.debug("scanning (\(options.active ? "active" : "passive"), \(extended ? "extended" : "legacy") commands)")
        return id
    }

    /// Stops the running scan, if any; it ends without error.
    public func stopScanning() async {
        guard let state = scanState else { return }
        await endScan(id: state.receiver.id)
    }

    public var isScanning: Bool { scanState != nil }

    func endScan(id: UInt64) async {
        guard let state = scanState, state.receiver.id == id else { return }
        removeScan()
        state.receiver.finish(nil)
        // Kept so that ``shutdown()`` waits for it: a stop begun by a consumer that went away
        // (its task cancelled, say by Ctrl-C) must reach the controller before the transport
        // closes, or a real adapter keeps scanning. The command's own timeout bounds the wait.
        let disable = Task { await self.disableScanning(extendedCommands: state.usesExtendedCommands) }
        scanDisable = disable
        await disable.value
        if scanDisable == disable { scanDisable = nil }
        logger.debug("scan stopped: \(state.receiver.statistics)")
    }

    /// Waits for the controller to confirm the end of the last scan, if a stop is under way.
    func waitForScanDisable() async {
        guard let scanDisable else { return }
        logger.debug("waiting for the controller to confirm the end of the scan")
        await scanDisable.value
    }

    private func disableScanning(extendedCommands: Bool) async {
        do {
            if extendedCommands {
                _ = try await send(LESetExtendedScanEnableCommand(enable: false))
            } else {
                _ = try await send(LESetScanEnableCommand(enable: false, filterDuplicates: false))
            }
        } catch {
            logger.warning("the controller did not confirm the end of the scan: \(error)")
        }
    }

    func failScan(with error: HostError) {
        guard let state = scanState else { return }
        removeScan()
        state.receiver.finish(error)
    }

    private func removeScan() {
        scanState = nil
        l2cap.setScanReceiver(nil)
        scanDidEnd()
    }
}
