import BluetoothCore

/// An L2CAP basic information frame, the B-frame used on every LE fixed channel
/// (Core 6.0, Vol 3, Part A, 3.1): a 2-octet length, a 2-octet channel ID and the payload.
public struct L2CAPBasicFrame: Sendable, Equatable, CustomStringConvertible {
    public var channelID: L2CAPChannelID
    public var payload: [UInt8]

    public init(channelID: L2CAPChannelID, payload: [UInt8]) {
        self.channelID = channelID
        self.payload = payload
    }

    /// The PDU Length field: the payload length, without the 4-octet header.
    public var length: UInt16 { UInt16(truncatingIfNeeded: payload.count) }

    public func encode() -> [UInt8] {
        Self.encode(channelID: channelID, payload: payload)
    }

    /// The B-frame of `payload` on `channelID`, without making a frame value first.
    public static func encode(channelID: L2CAPChannelID, payload: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + payload.count)
        writer.write(UInt16(truncatingIfNeeded: payload.count))
        writer.write(channelID.rawValue)
        writer.write(contentsOf: payload)
        return writer.bytes
    }

    /// The channel ID and payload of a complete B-frame, read in place: the payload is a
    /// slice of `bytes` (the receive path's form of ``decode(_:)``).
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> (channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        guard let rawLength = ByteReader.uint16(in: bytes, at: 0), let rawChannelID = ByteReader.uint16(in: bytes, at: 2) else {
            throw .truncated(context: "L2CAP B-frame", needed: 4, available: bytes.count)
        }
        let length = Int(rawLength)
        guard bytes.count - 4 == length else {
            throw .lengthMismatch(context: "L2CAP B-frame", declared: length, actual: bytes.count - 4)
        }
        return (L2CAPChannelID(rawValue: rawChannelID), bytes[(bytes.startIndex + 4)...])
    }

    /// Decodes a complete (reassembled) B-frame; the length field must match the payload.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> L2CAPBasicFrame {
        var reader = ByteReader(bytes, context: "L2CAP B-frame")
        let length = Int(try reader.readUInt16())
        let channelID = L2CAPChannelID(rawValue: try reader.readUInt16())
        guard reader.remainingCount == length else {
            throw .lengthMismatch(context: "L2CAP B-frame", declared: length, actual: reader.remainingCount)
        }
        return L2CAPBasicFrame(channelID: channelID, payload: reader.readRemaining())
    }

    public var description: String {
        "L2CAP cid=\(channelID) [\(Hex.encode(payload, separator: " "))]"
    }
}
