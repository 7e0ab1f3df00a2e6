import BluetoothCore
import BluetoothHCI

/// The scan that is running; there is at most one.
struct ScanState {
    let id: UInt64
    var assembler: AdvertisementAssembler
    let continuation: AsyncThrowingStream<Advertisement, any Error>.Continuation
    let usesExtendedCommands: Bool
}

extension LEHost {
    /// Starts scanning and returns the discoveries as they come. The scan stops when the
    /// stream's consumer stops iterating, when ``stopScanning()`` is called (the stream then
    /// finishes), or with an error when the transport closes.
    ///
    /// Only one scan runs at a time: a second call throws ``HostError/scanInProgress``.
    /// Duplicates are filtered by the host, not the controller, so that a peer's changed data
    /// and its scan response are still reported.
    public func scan(_ options: ScanOptions = ScanOptions()) async throws -> AsyncThrowingStream<Advertisement, any Error> {
        try requirePoweredOn()
        guard scanState == nil else { throw HostError.scanInProgress }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Advertisement.self, bufferingPolicy: .unbounded)
        let id = makeIdentifier()
        let extended = controllerInfo?.supportsExtendedScanning == true
        scanState = ScanState(id: id, assembler: AdvertisementAssembler(options: options), continuation: continuation, usesExtendedCommands: extended)
        continuation.onTermination = { [weak self] _ in
            Task { [weak self] in await self?.endScan(id: id) }
        }
        do {
            let type: LEScanType = options.active ? .active : .passive
            if extended {
                _ = try await send(LESetExtendedScanParametersCommand(
                    le1M: .init(scanType: type, scanInterval: options.interval, scanWindow: options.window)))
                _ = try await send(LESetExtendedScanEnableCommand(enable: true))
            } else {
                _ = try await send(LESetScanParametersCommand(scanType: type, scanInterval: options.interval, scanWindow: options.window))
                _ = try await send(LESetScanEnableCommand(enable: true, filterDuplicates: false))
            }
        } catch {
            if scanState?.id == id { scanState = nil }
            continuation.finish(throwing: error)
            throw error
        }
        logger.debug("scanning (\(options.active ? "active" : "passive"), \(extended ? "extended" : "legacy") commands)")
        return stream
    }

    /// Stops the running scan, if any; its stream finishes without error.
    public func stopScanning() async {
        guard let state = scanState else { return }
        await endScan(id: state.id)
    }

    public var isScanning: Bool { scanState != nil }

    private func endScan(id: UInt64) async {
        guard let state = scanState, state.id == id else { return }
        scanState = nil
        state.continuation.finish()
        if state.usesExtendedCommands {
            _ = try? await send(LESetExtendedScanEnableCommand(enable: false))
        } else {
            _ = try? await send(LESetScanEnableCommand(enable: false, filterDuplicates: false))
        }
        logger.debug("scan stopped")
    }

    func failScan(with error: HostError) {
        guard let state = scanState else { return }
        scanState = nil
        state.continuation.finish(throwing: error)
    }

    func didReceive(_ event: LEAdvertisingReportEvent) {
        // Mutated in place: a copy of the state would copy the assembler's table per report.
        for report in event.reports {
            guard let advertisement = scanState?.assembler.receive(report) else { continue }
            scanState?.continuation.yield(advertisement)
        }
    }

    func didReceive(_ event: LEExtendedAdvertisingReportEvent) {
        // Mutated in place: a copy of the state would copy the assembler's table per report.
        for report in event.reports {
            guard let advertisement = scanState?.assembler.receive(report) else { continue }
            scanState?.continuation.yield(advertisement)
        }
    }
}
