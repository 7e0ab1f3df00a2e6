import BluetoothCore
import BluetoothHCI

extension Host {
    /// Routes a reassembled L2CAP PDU to its fixed channel (Core 6.0, Vol 3, Part A, 2.1).
    func route(l2capPDU pdu: [UInt8], connectionHandle: UInt16) {
        guard let connection = connectionsByHandle[connectionHandle] else {
            logger.debug("L2CAP data for unknown connection 0x\(String(connectionHandle, radix: 16)) dropped")
            return
        }
        let frame: L2CAPBasicFrame
        do {
            frame = try L2CAPBasicFrame.decode(pdu)
        } catch {
            logger.warning("malformed L2CAP PDU from \(connection.peer) dropped: \(error)")
            return
        }
        switch frame.channelID {
        case .att: routeATT(frame.payload, on: connection)
        case .leSignaling: receiveSignaling(frame.payload, on: connection)
        case .securityManager: receiveSecurityManager(frame.payload, on: connection)
        default: logger.debug("L2CAP data on unsupported channel \(frame.channelID) dropped")
        }
    }

    /// Client-bound PDUs (responses, notifications, indications) go to the connection's GATT
    /// client; everything else to this device's GATT server.
    private func routeATT(_ payload: [UInt8], on connection: Connection) {
        guard let first = payload.first else { return }
        switch ATTOpcode(rawValue: first).kind {
        case .response?, .notification?, .indication?:
            connection.gatt.receive(payload)
        default:
            answerATTServerRequest(payload, on: connection)
        }
    }

    /// This device's GATT server. Until services are published it answers what every server
    /// must: Exchange MTU, and "not supported" or "not found" for the rest.
    private func answerATTServerRequest(_ payload: [UInt8], on connection: Connection) {
        guard let first = payload.first else { return }
        let opcode = ATTOpcode(rawValue: first)
        // Commands (bit 6 set) and confirmations are never answered (Core 6.0, Vol 3, Part F, 3.3).
        if opcode.isCommand || opcode.kind == .confirmation { return }
        let response: ATTPDU
        if case let .exchangeMTURequest(request)? = try? ATTPDU.decode(payload) {
            response = .exchangeMTUResponse(ATTExchangeMTUResponse(serverRxMTU: configuration.preferredATTMTU))
            connection.gatt.peerRequestedMTU(request.clientRxMTU)
        } else {
            let code: ATTErrorCode = opcode.kind == .request ? .attributeNotFound : .requestNotSupported
            response = .errorResponse(ATTErrorResponse(requestOpcode: opcode, handle: 0x0000, code: code))
        }
        controller.sendACL(connectionHandle: connection.handle,
                           pdu: L2CAPBasicFrame(channelID: .att, payload: response.encode()).encode())
    }
}
