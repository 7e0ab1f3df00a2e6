import BluetoothCore
import BluetoothHCI

/// What a change of addresses paused, to resume afterwards.
struct PausedAddressUse: Sendable {
    /// Legacy advertising (the legacy command family).
    var legacyAdvertising = false
    /// Advertising sets, the legacy advertising's set of legacy PDUs among them.
    var advertisingSets: [UInt8] = []
    /// The running scan (its receiver's id) and the commands it used.
    var scan: (id: UInt64, extendedCommands: Bool)?

    var isEmpty: Bool { !legacyAdvertising && advertisingSets.isEmpty && scan == nil }
}

/// Changing what the controller does with addresses: this device's private addresses
/// (LEHost+Privacy.swift) and the resolving list (SMP/LEHost+ResolvingList.swift). The
/// controller refuses both while it uses them: LE Set Random Address while legacy advertising,
/// scanning or initiating (Core 6.0, Vol 4, Part E, 7.8.4), LE Set Advertising Set Random
/// Address while its set advertises connectably (7.8.52), and a resolving list change while
/// address resolution is on and any advertising, scanning or initiating is (7.8.38-7.8.40,
/// 7.8.44). So the host makes these changes one at a time (``addressingGate``, which starting
/// and stopping advertising and scanning and sending LE Create Connection take too), pauses
/// the advertising and scanning that are on, and resumes them after; and it waits while a
/// connection attempt runs, rather than break it.
extension LEHost {
    /// Returns once the host has handled every event the controller sent before the answer to
    /// the command this task last got: a command's answer resumes its caller before the events
    /// of the same read reach the host actor. Advertising the host just stopped may have
    /// brought a connection (LE Connection Complete, LE Advertising Set Terminated) that the
    /// host must see before it changes the address that connection was made with.
    func settleControllerEvents() async {
        await controller.waitForReceivedBatches()
        await l2cap.barrier()
    }

    /// A connection attempt has the controller (or waits for it): no address may change under it.
    var isConnectionAttemptRunning: Bool { connectTurn != nil || pendingConnection != nil }

    /// A pairing is running on some link.
    var isPairingRunning: Bool {
        links.values.contains { link in link.security?.procedure.map { !$0.isFinished } ?? false }
    }

    /// Makes the changes that are due: a new private address (unless a connection attempt or a
    /// pairing runs), resolving list entries (unless a connection attempt runs). One change at
    /// a time; what must wait is made when it ends (``addressingBlockerEnded()``).
    func updateAddressing() async {
        guard transportClosure == nil, controllerInfo != nil, controllerRecovery == nil else { return }
        // Nothing left (a retry fired after the sets it was for were stopped): the rotation's
        // timer must be the one armed, or the addresses would never change again.
        guard hasAddressingWork else { return scheduleAddressRotation() }
        let gate = addressingGate
        do { try await gate.enter() } catch { return }
        defer { gate.leave() }
        // Checked again now that the gate is held: an attempt may have come first.
        let rotate = addressRotation?.isChangePending == true && !isConnectionAttemptRunning && !isPairingRunning
        let syncList = resolvingList?.isInStep == false && !isConnectionAttemptRunning
        guard rotate || syncList, transportClosure == nil else {
            if hasAddressingWork {
                logger.debug("address changes wait: \(isConnectionAttemptRunning ? "a connection attempt runs" : "a pairing runs")")
            }
            // Its end makes what is pending (addressingBlockerEnded); unless everything is
            // due already, the lifetime's end comes in the meantime.
            return scheduleAddressRotation()
        }
        do {
            try await withAddressUsePaused {
                if syncList { await self.syncResolvingList() }
                if rotate { try await self.changePrivateAddresses() }
            }
        } catch {
            // A change after the first (power-on reports its own failure) that left an old
            // address in use (the controller's, or an advertising set's) is tried again on a
            // timer: waiting for a connection attempt or a pairing to end instead would keep it
            // for as long as none came. Not when this task was cancelled: shutdown does that
            // (a timer that fired is no longer cancelled by the next one armed).
            if rotate, !Task.isCancelled, addressRotation?.isChangePending == true, addressRotation?.deviceAddress != nil,
               let delay = addressRotation?.changeFailed() {
                logger.warning("changing addresses failed: \(error); trying again in \(delay)")
                scheduleAddressRetry(after: delay)
                return
            }
            logger.warning("changing addresses failed: \(error)")
        }
        scheduleAddressRotation()
    }

    /// Whether a change is pending: new private addresses (all, or the sets' a change did not
    /// reach), or resolving list entries.
    var hasAddressingWork: Bool {
        addressRotation?.isChangePending == true || resolvingList?.isInStep == false
    }

    /// Something that held address changes back (a connection attempt, a pairing) ended.
    func addressingBlockerEnded() {
        guard hasAddressingWork else { return }
        Task { await self.updateAddressing() }
    }

    /// Pauses the advertising and scanning that are on, waits until the host has seen any
    /// connection they brought, runs `change`, and resumes what is still wanted: advertising
    /// that a central connected through meanwhile stays ended, as it would have. The caller
    /// holds ``addressingGate`` and has made sure no connection attempt runs.
    func withAddressUsePaused(_ change: () async throws -> Void) async throws {
        let paused = try await pauseAddressUse()
        if !paused.isEmpty { await settleControllerEvents() }
        do {
            try await change()
        } catch {
            await resume(paused)
            throw error
        }
        await resume(paused)
    }

    private func pauseAddressUse() async throws(HostError) -> PausedAddressUse {
        var paused = PausedAddressUse()
        if advertising.isEnabled, advertising.setHandle == nil {
            _ = try await send(LESetAdvertisingEnableCommand(enable: false))
            paused.legacyAdvertising = true
        }
        var sets = advertisingSetsState.enabled.sorted()
        if advertising.isEnabled, let handle = advertising.setHandle { sets.append(handle) }
        if !sets.isEmpty {
            _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: false, sets: sets.map { .init(advertisingHandle: $0) }))
            paused.advertisingSets = sets
        }
        if let scan = scanState, scanDisable == nil {
            if scan.usesExtendedCommands {
                _ = try await send(LESetExtendedScanEnableCommand(enable: false))
            } else {
                _ = try await send(LESetScanEnableCommand(enable: false, filterDuplicates: false))
            }
            paused.scan = (scan.receiver.id, scan.usesExtendedCommands)
        }
        if !paused.isEmpty { logger.debug("paused for an address change: \(paused.description)") }
        return paused
    }

    /// Resumes what was paused, unless it ended meanwhile (a scan stopped, a central connected
    /// through the advertising, the app stopped it).
    private func resume(_ paused: PausedAddressUse) async {
        do {
            if let scan = paused.scan, scanState?.receiver.id == scan.id {
                if scan.extendedCommands {
                    _ = try await send(LESetExtendedScanEnableCommand(enable: true))
                } else {
                    _ = try await send(LESetScanEnableCommand(enable: true, filterDuplicates: false))
                }
            }
            let entries = paused.advertisingSets.compactMap { handle -> LESetExtendedAdvertisingEnableCommand.Set? in
                if handle == advertising.setHandle { return advertising.isEnabled ? advertising.configuration?.set?.enableEntry : nil }
                guard advertisingSetsState.enabled.contains(handle) else { return nil }
                return advertisingSetsState.sets[handle]?.enableEntry
            }
            if !entries.isEmpty { _ = try await send(LESetExtendedAdvertisingEnableCommand(enable: true, sets: entries)) }
            if paused.legacyAdvertising, advertising.isEnabled, advertising.setHandle == nil {
                _ = try await send(LESetAdvertisingEnableCommand(enable: true))
            }
        } catch {
            logger.error("could not resume advertising or scanning after an address change: \(error)")
        }
    }
}

extension PausedAddressUse: CustomStringConvertible {
    var description: String {
        var parts: [String] = []
        if legacyAdvertising { parts.append("advertising") }
        if !advertisingSets.isEmpty { parts.append("advertising set(s) \(advertisingSets.map(String.init).joined(separator: ", "))") }
        if scan != nil { parts.append("scanning") }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }
}

extension LEHost {
    /// Runs `body` holding ``addressingGate``: starting and stopping advertising and scanning,
    /// and LE Create Connection, wait for an address change under way (a few commands), and
    /// no change starts during them. Always the outermost gate, so that gates never wait on
    /// each other the other way round.
    func withAddressingGate<T>(_ body: () async throws -> T) async throws -> T {
        let gate = addressingGate
        do { try await gate.enter() } catch { throw HostError.cancelled }
        defer { gate.leave() }
        return try await body()
    }
}
