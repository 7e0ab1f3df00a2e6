import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// Asks for other PHYs on a connection with LE Set PHY and returns the PHYs in effect once
    /// the controller reports LE PHY Update Complete (Core 6.0, Vol 4, Part E, 7.8.49,
    /// 7.7.65.12). The result may differ from the preference: the peer may support neither
    /// 2M nor Coded and stay on 1M, which is no error.
    ///
    /// Throws ``HostError/linkProcedureRefused(_:)``: by the controller when LE Set PHY is
    /// refused (Command Status, e.g. Unsupported Feature or Parameter Value, 0x11, or Unknown
    /// HCI Command, 0x01, without asking a controller that does not list it), by the
    /// peer when the update completes with an error (e.g. Unsupported Remote Feature, 0x1A);
    /// ``HostError/procedureTimeout(_:)`` when the controller never acknowledges the command
    /// or the update does not complete within ``HostConfiguration/linkProcedureTimeout``.
    func setPHY(_ connection: Connection, _ preference: PHYPreference) async throws -> ConnectionPHY {
        if let violation = preference.violation { throw HostError.invalidArgument(violation) }
        do {
            // A Bluetooth 4.x controller has no LE Set PHY: refused as it would refuse it.
            try requireCommand(LESetPHYCommand.self, listedAs: .leSetPHY)
        } catch {
            throw Self.refusal(error, of: .phyUpdate)
        }
        let command = LESetPHYCommand(connectionHandle: connection.handle, allPHYs: preference.allPHYs,
                                      txPHYs: preference.transmit ?? [], rxPHYs: preference.receive ?? [],
                                      phyOptions: preference.codedOptions)
        let change = try await awaitLinkChange(.phyUpdate, on: connection, limit: configuration.linkProcedureTimeout,
                                               onTimeout: { .failure(.procedureTimeout(LinkProcedure.phyUpdate.description)) },
                                               start: { () throws(HostError) in _ = try await self.send(command) })
        guard case let .phy(phy) = change else { throw HostError.protocolViolation("the PHY update ended with \(change)") }
        return phy
    }

    /// Reads the PHYs of a connection from the controller (LE Read PHY) and keeps them on the
    /// connection. A controller without LE Read PHY (Bluetooth 4.x, or one that answered it
    /// Unknown HCI Command) fails it with ``HostError/hci(_:)``, Unknown HCI Command, unasked.
    func readPHY(_ connection: Connection) async throws -> ConnectionPHY {
        guard connection.isConnected else { throw HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier) }
        try requireCommand(LEReadPHYCommand.self, listedAs: .leReadPHY)
        let answer = try await send(LEReadPHYCommand(connectionHandle: connection.handle))
        let phy = ConnectionPHY(tx: answer.txPHY, rx: answer.rxPHY)
        if connection.update(phy: phy) { connection.linkChanges.yield(.phy(phy)) }
        return phy
    }

    /// The PHYs the controller prefers on every later connection (LE Set Default PHY, Core 6.0,
    /// Vol 4, Part E, 7.8.48); a refusal is ``HostError/linkProcedureRefused(_:)`` by the controller.
    public func setDefaultPHY(_ preference: PHYPreference) async throws {
        if let violation = preference.violation { throw HostError.invalidArgument(violation) }
        try requirePoweredOn()
        do {
            try requireCommand(LESetDefaultPHYCommand.self, listedAs: .leSetDefaultPHY)
            _ = try await send(LESetDefaultPHYCommand(allPHYs: preference.allPHYs, txPHYs: preference.transmit ?? [],
                                                      rxPHYs: preference.receive ?? []))
        } catch {
            throw Self.refusal(error, of: .phyUpdate)
        }
    }

    /// LE PHY Update Complete: the outcome of this host's request, or an update the peer or
    /// the controller started.
    func didUpdatePHY(_ event: LEPHYUpdateCompleteEvent) {
        let key = LinkWaiterKey(handle: event.connectionHandle, procedure: .phyUpdate)
        guard event.status.isSuccess else {
            logger.info("PHY update on \(Hex.format(event.connectionHandle)) failed: \(event.status)")
            resolveLinkWaiters(key, with: .failure(.linkProcedureRefused(
                LinkProcedureRefusal(procedure: .phyUpdate, refusedBy: .peer, status: event.status))))
            return
        }
        let phy = ConnectionPHY(tx: event.txPHY, rx: event.rxPHY)
        if let connection = connection(event.connectionHandle), connection.update(phy: phy) {
            logger.debug("connection \(Hex.format(event.connectionHandle)) PHY now \(phy)")
            connection.linkChanges.yield(.phy(phy))
        }
        resolveLinkWaiters(key, with: .success(.phy(phy)))
    }
}
