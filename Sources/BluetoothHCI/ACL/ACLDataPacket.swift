import BluetoothCore

/// The Packet_Boundary_Flag of an ACL data packet (Core 6.0, Vol 4, Part E, 5.4.2).
public enum ACLPacketBoundary: UInt8, Sendable {
    /// First fragment of an L2CAP PDU, non-automatically-flushable (host to controller on LE).
    case firstNonFlushable = 0b00
    /// A continuing fragment.
    case continuing = 0b01
    /// First fragment of an L2CAP PDU, automatically flushable (controller to host on LE).
    case firstFlushable = 0b10
    /// A complete L2CAP PDU, automatically flushable (not used on LE; kept for decoding).
    case complete = 0b11

    public var startsPDU: Bool { self != .continuing }
}

/// An HCI ACL data packet: one fragment of an L2CAP PDU on a connection.
public struct ACLDataPacket: Sendable, Equatable, CustomStringConvertible {
    public var connectionHandle: UInt16
    public var packetBoundary: ACLPacketBoundary
    /// The Broadcast_Flag; always 0 (point-to-point) on LE.
    public var broadcastFlag: UInt8
    public var data: [UInt8]

    public init(connectionHandle: UInt16, packetBoundary: ACLPacketBoundary, broadcastFlag: UInt8 = 0, data: [UInt8]) {
        self.connectionHandle = connectionHandle
        self.packetBoundary = packetBoundary
        self.broadcastFlag = broadcastFlag
        self.data = data
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + data.count)
        writer.write(connectionHandle & 0x0FFF | UInt16(packetBoundary.rawValue) << 12 | UInt16(broadcastFlag & 0b11) << 14)
        writer.write(UInt16(truncatingIfNeeded: data.count))
        writer.write(contentsOf: data)
        return writer.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> ACLDataPacket {
        try decode(bytes[...])
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> ACLDataPacket {
        var reader = ByteReader(bytes, context: "ACL data packet")
        let header = try reader.readUInt16()
        let length = Int(try reader.readUInt16())
        guard reader.remainingCount == length else {
            throw .lengthMismatch(context: "ACL data packet", declared: length, actual: reader.remainingCount)
        }
        return ACLDataPacket(
            connectionHandle: header & 0x0FFF,
            packetBoundary: ACLPacketBoundary(rawValue: UInt8(header >> 12) & 0b11) ?? .continuing,
            broadcastFlag: UInt8(header >> 14),
            data: reader.readRemaining()
        )
    }

    /// The header fields and the data of an ACL packet, read in place: the data is a slice of
    /// `bytes`, not a copy (the receive path's form of `decode(_:)`).
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> (connectionHandle: UInt16, boundary: ACLPacketBoundary, data: ArraySlice<UInt8>) {
        guard let header = ByteReader.uint16(in: bytes, at: 0), let rawLength = ByteReader.uint16(in: bytes, at: 2) else {
            throw .truncated(context: "ACL data packet", needed: 4, available: bytes.count)
        }
        let length = Int(rawLength)
        guard bytes.count - 4 == length else {
            throw .lengthMismatch(context: "ACL data packet", declared: length, actual: bytes.count - 4)
        }
        return (header & 0x0FFF, ACLPacketBoundary(rawValue: UInt8(header >> 12) & 0b11) ?? .continuing, bytes[(bytes.startIndex + 4)...])
    }

    public var description: String {
        "ACL handle=\(Hex.format(connectionHandle)) pb=\(packetBoundary) \(Hex.encode(data, separator: " "))"
    }
}
