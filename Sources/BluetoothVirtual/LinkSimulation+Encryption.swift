import BluetoothCore
import BluetoothHCI

// LE link encryption (Core 6.0, Vol 6, Part B, 5.1.3): the central's host starts it with LE
// Enable Encryption, the peripheral's host supplies its key on LE Long Term Key Request.
// Nothing is enciphered on the simulated air: the two keys are compared, which is what
// decides the outcome on a real link (equal keys give the same session key; different ones
// fail the MIC of the first encrypted PDU).

extension LinkSimulation {
    // MARK: Commands

    /// LE Enable Encryption (Core 6.0, Vol 4, Part E, 7.8.24): starts encryption, or
    /// restarts it with a new key (pause, then start) on an encrypted link.
    mutating func enableEncryption(_ command: LEEnableEncryptionCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            status(id, opcode, .unknownConnectionIdentifier)
            return
        }
        guard controllers[id]?.configuration.leFeatures.contains(.encryption) == true else {
            status(id, opcode, .unsupportedFeatureOrParameter)
            return
        }
        // Only the central starts encryption (7.8.24); one procedure at a time, and none on a
        // link being terminated.
        guard role == .central, !connection.procedures.contains(where: \.isEncryption), connection.termination == nil else {
            status(id, opcode, .commandDisallowed)
            return
        }
        let request = EncryptionRequest(randomNumber: command.randomNumber, encryptedDiversifier: command.encryptedDiversifier,
                                        longTermKey: Self.key(command.longTermKey))
        // A restart first pauses encryption: LL_PAUSE_ENC_REQ / LL_PAUSE_ENC_RSP (5.1.3.2).
        let pause = connection.encryptionKey == nil ? 0 : RadioTiming.encryptionPauseEvents
        connections[connection.id]?.procedures.append(.encryptionRequest(request, at: connection.eventCounter + pause))
        status(id, opcode, .success)
    }

    /// LE Long Term Key Request Reply (7.8.25) and Negative Reply (7.8.26, `key` nil): the
    /// peripheral's host answers the request it was given.
    mutating func replyToLongTermKeyRequest(handle: UInt16, key: [UInt8]?, opcode: HCIOpcode, from id: ControllerID) {
        let returned = handleBytes(handle)
        guard let (connection, role) = connection(handle, of: id) else {
            complete(id, opcode, .unknownConnectionIdentifier, returned)
            return
        }
        guard role == .peripheral, let index = connection.procedures.firstIndex(where: { procedure in
            if case .awaitingLongTermKey = procedure { return true }
            return false
        }), case let .awaitingLongTermKey(request) = connection.procedures[index] else {
            // No request is waiting for this host's answer.
            complete(id, opcode, .commandDisallowed, returned)
            return
        }
        let next = connection.eventCounter
        if let key {
            connections[connection.id]?.procedures[index] = .encryptionStart(
                centralKey: request.longTermKey, peripheralKey: Self.key(key), at: next + RadioTiming.encryptionStartEvents)
        } else {
            // LL_REJECT_EXT_IND with PIN or Key Missing (Core 6.0, Vol 6, Part B, 5.1.3.1).
            connections[connection.id]?.procedures[index] = .encryptionRejected(reason: .pinOrKeyMissing, at: next)
        }
        complete(id, opcode, .success, returned)
    }

    /// A key as the link keeps it: 16 octets (HCI decoding already guarantees it).
    private static func key(_ bytes: [UInt8]) -> [UInt8] {
        Array((bytes + [UInt8](repeating: 0, count: 16)).prefix(16))
    }

    // MARK: Procedure steps

    /// LL_ENC_REQ reached the peripheral: its host is asked for the key, unless it cannot be.
    mutating func deliverEncryptionRequest(_ request: EncryptionRequest, on id: LinkConnectionID) {
        guard var connection = connections[id] else { return }
        let peripheral = connection.end(.peripheral)
        // Called during the event that carried LL_ENC_REQ: an answer goes in the one after.
        let next = connection.eventCounter + 1
        guard controllers[peripheral.controller]?.configuration.leFeatures.contains(.encryption) == true else {
            // A peripheral without LE Encryption does not know LL_ENC_REQ (LL_UNKNOWN_RSP): the
            // central reports Unsupported Remote Feature.
            connection.procedures.append(.encryptionRejected(reason: .unsupportedRemoteFeature, at: next))
            connections[id] = connection
            return
        }
        let unmasked = controllers[peripheral.controller].map {
            $0.eventMask.contains(.leMeta) && $0.leEventMask.contains(.longTermKeyRequest)
        } ?? false
        guard unmasked else {
            // A host that masked the request cannot supply a key: as if it had no key.
            connection.procedures.append(.encryptionRejected(reason: .pinOrKeyMissing, at: next))
            connections[id] = connection
            return
        }
        connection.procedures.append(.awaitingLongTermKey(request))
        connections[id] = connection
        emit(.longTermKeyRequest(LELongTermKeyRequestEvent(
            connectionHandle: peripheral.handle, randomNumber: request.randomNumber, encryptedDiversifier: request.encryptedDiversifier)),
             to: peripheral.controller)
    }

    /// The start handshake ran with both keys. Equal keys: the link is encrypted and both
    /// hosts hear Encryption Change, or Encryption Key Refresh Complete when it was encrypted
    /// before (Core 6.0, Vol 4, Part E, 7.7.8, 7.7.39). Different keys: the first encrypted
    /// PDU fails its MIC and both ends leave the connection with reason 0x3D (Core 6.0,
    /// Vol 6, Part B, 5.1.3.1).
    mutating func finishEncryptionStart(centralKey: [UInt8], peripheralKey: [UInt8], on id: LinkConnectionID) {
        guard var connection = connections[id] else { return }
        guard centralKey == peripheralKey else {
            close(id, reasons: [.central: .connectionTerminatedMICFailure, .peripheral: .connectionTerminatedMICFailure])
            return
        }
        let wasEncrypted = connection.encryptionKey != nil
        connection.encryptionKey = centralKey
        connections[id] = connection
        // The peripheral hears the central's LL_START_ENC_RSP first (5.1.3.1).
        for role in [ConnectionRole.peripheral, .central] {
            let end = connection.end(role)
            guard end.isAlive else { continue }
            if wasEncrypted {
                emit(.encryptionKeyRefreshComplete(EncryptionKeyRefreshCompleteEvent(connectionHandle: end.handle)), to: end.controller)
            } else {
                emit(.encryptionChange(EncryptionChangeEvent(connectionHandle: end.handle, encryptionEnabled: .on)), to: end.controller)
            }
        }
    }

    /// The central heard LL_REJECT_EXT_IND: its host gets Encryption Change with the reason
    /// and encryption off; the peripheral's host hears nothing more. A rejected restart
    /// leaves the link unencrypted, as the pause left it (5.1.3.2).
    mutating func rejectEncryption(reason: HCIStatus, on id: LinkConnectionID) {
        guard var connection = connections[id] else { return }
        connection.encryptionKey = nil
        connections[id] = connection
        let central = connection.end(.central)
        guard central.isAlive else { return }
        emit(.encryptionChange(EncryptionChangeEvent(status: reason, connectionHandle: central.handle, encryptionEnabled: .off)), to: central.controller)
    }
}
