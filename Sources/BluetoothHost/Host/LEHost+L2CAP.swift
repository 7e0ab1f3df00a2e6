import BluetoothCore
import BluetoothHCI

extension LEHost {
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
            server.receive(payload, from: connection)
        }
    }
}
