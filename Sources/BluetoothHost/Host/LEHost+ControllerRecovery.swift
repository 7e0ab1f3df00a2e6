import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// A Hardware Error event (Core 6.0, Vol 4, Part E, 7.7.16): the controller failed, and
    /// may have reset itself, which clears its event masks, its links, its scan and its
    /// advertising. Left as it is, it would take the host's next LE Create Connection but
    /// never report the connection (the LE events it needs are masked again). So the host ends
    /// what the controller no longer has and initializes it again, as at ``powerOn()`` (HCI
    /// Reset first), the way BlueZ resets a controller after a hardware error. Connecting,
    /// scanning and advertising wait until that is done.
    func beginControllerRecovery(hardwareCode: UInt8) {
        guard controllerInfo != nil, controllerRecovery == nil, transportClosure == nil else { return }
        controllerRecovery = Task { await self.recoverController(hardwareCode: hardwareCode) }
    }

    /// Returns once no initialization after a hardware error is under way.
    func waitForControllerRecovery() async {
        while let recovery = controllerRecovery { await recovery.value }
    }

    private func recoverController(hardwareCode: UInt8) async {
        defer { controllerRecovery = nil }
        let failure = HostError.controllerFailure(hardwareCode: hardwareCode)
        failScan(with: failure)
        if let pending = pendingConnection {
            answer(pending.id, with: .failure(.connectionFailed(pending.peer, .hardwareFailure)))
            endAttempt(pending.id)
        }
        // Links the controller did not report ended: it has none after its reset.
        for handle in links.keys.sorted() {
            controller.forgetConnection(handle)
            connectionEnded(handle, reason: .hardwareFailure)
        }
        if advertising.isEnabled {
            advertising.didStop()
            logger.warning("advertising ended with the controller's hardware error")
        }
        // The reset removed every advertising set (Core 6.0, Vol 4, Part E, 7.3.2).
        advertising.setHandle = nil
        advertisingSetsState.legacyAdvertisingHandle = nil
        advertisingSetsState.didRemoveAll()
        addressRotation?.controllerWasReset()
        resolvingList?.controllerWasReset()
        addressResolver.setControllerResolved([])
        do {
            controllerInfo = try await controller.initialize()
            // The reset cleared the random address: the static identity, the private address
            // (or the app's) again; and the resolving list, filled again once recovered.
            if let randomAddress { try await applyRandomAddress(randomAddress) }
            logger.notice("controller initialized again after its hardware error \(Hex.format(hardwareCode))")
            Task { await self.updateAddressing() }
        } catch {
            logger.error("the controller could not be initialized again after its hardware error: \(error)")
        }
    }
}
