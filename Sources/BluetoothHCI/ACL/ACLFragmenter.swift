/// Cuts an L2CAP PDU into ACL data packets no longer than the controller's buffer
/// (HC_LE_ACL_Data_Packet_Length).
public enum ACLFragmenter {
    public static func fragments(of pdu: [UInt8], connectionHandle: UInt16, maximumDataLength: Int) -> [ACLDataPacket] {
        let size = max(1, maximumDataLength)
        guard !pdu.isEmpty else {
            return [ACLDataPacket(connectionHandle: connectionHandle, packetBoundary: .firstNonFlushable, data: [])]
        }
        var packets: [ACLDataPacket] = []
        packets.reserveCapacity((pdu.count + size - 1) / size)
        var offset = 0
        while offset < pdu.count {
            let end = min(offset + size, pdu.count)
            packets.append(ACLDataPacket(
                connectionHandle: connectionHandle,
                packetBoundary: offset == 0 ? .firstNonFlushable : .continuing,
                data: Array(pdu[offset..<end])
            ))
            offset = end
        }
        return packets
    }
}
