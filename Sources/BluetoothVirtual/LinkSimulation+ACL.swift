import BluetoothCore
import BluetoothHCI

extension LinkSimulation {
    /// An ACL data packet from a host: it takes one of the controller's LE ACL buffers and
    /// waits for the connection events that carry it (Core 6.0, Vol 4, Part E, 4.1.1).
    mutating func receiveACL(_ bytes: [UInt8], from id: ControllerID) {
        let packet: ACLDataPacket
        do {
            packet = try ACLDataPacket.decode(bytes)
        } catch {
            logger.warning("controller \(id): dropping malformed ACL packet from the host: \(error)")
            return
        }
        guard var state = controllers[id] else { return }
        guard let connectionID = state.connections[packet.connectionHandle], var connection = connections[connectionID],
              let role = connection.role(of: id) else {
            logger.debug("controller \(id): dropping ACL data for unknown handle \(Hex.format(packet.connectionHandle))")
            return
        }
        guard packet.data.count <= Int(state.configuration.aclDataLength) else {
            logger.warning("controller \(id): dropping a \(packet.data.count)-byte ACL packet, longer than the \(state.configuration.aclDataLength)-byte buffers")
            emit(.dataBufferOverflow(DataBufferOverflowEvent(linkType: .acl)), to: id)
            return
        }
        guard state.buffers.take(handle: packet.connectionHandle) else {
            // More packets than buffers: the host broke flow control (Core 6.0, Vol 4, Part E, 7.7.26).
            logger.warning("controller \(id): ACL buffers full, packet dropped")
            emit(.dataBufferOverflow(DataBufferOverflowEvent(linkType: .acl)), to: id)
            return
        }
        controllers[id] = state
        connection.updateOutgoing(from: role) { $0.enqueue(packet.data, startsPDU: packet.packetBoundary.startsPDU) }
        connections[connectionID] = connection
    }
}
