import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// The Security Manager channel. This host does not pair: a Pairing Request or a
    /// Security Request is answered with Pairing Failed, Pairing Not Supported
    /// (Core 6.0, Vol 3, Part H, 3.5.5); one of the wrong length or with values out of range
    /// with Pairing Failed, Invalid Parameters (Part H, 3.5.5, reason 0x0A). Other malformed
    /// PDUs, and codes reserved for future use (Part H, 3.3), are ignored: no pairing is in
    /// progress for them to fail.
    func receiveSecurityManager(_ payload: [UInt8], on connection: Connection) {
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU.decode(payload)
        } catch {
            let code = payload.first.map(SMPCode.init(rawValue:))
            guard code == .pairingRequest || code == .securityRequest else {
                logger.debug("malformed SMP PDU from \(connection.peer) ignored: \(error)")
                return
            }
            logger.info("malformed SMP PDU from \(connection.peer): \(error)")
            let reply = SMPPDU.pairingFailed(.invalidParameters)
            l2cap.send(reply.encode(), channel: .securityManager, connectionHandle: connection.handle)
            return
        }
        switch pdu {
        case .pairingRequest, .securityRequest:
            logger.info("\(connection.peer) asked to pair; pairing is not supported")
            let reply = SMPPDU.pairingFailed(.pairingNotSupported)
            l2cap.send(reply.encode(), channel: .securityManager, connectionHandle: connection.handle)
        default:
            logger.debug("SMP \(pdu) ignored")
        }
    }
}
