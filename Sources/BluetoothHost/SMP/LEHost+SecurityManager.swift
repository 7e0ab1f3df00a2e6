import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// The Security Manager channel. This host does not pair: a Pairing Request or a
    /// Security Request is answered with Pairing Failed, Pairing Not Supported
    /// (Core 6.0, Vol 3, Part H, 3.5.5).
    func receiveSecurityManager(_ payload: [UInt8], on connection: Connection) {
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU.decode(payload)
        } catch {
            logger.debug("malformed SMP PDU from \(connection.peer) ignored: \(error)")
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
