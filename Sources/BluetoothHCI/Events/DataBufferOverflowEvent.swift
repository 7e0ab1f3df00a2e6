import BluetoothCore

/// Data Buffer Overflow (Core 6.0, Vol 4, Part E, 7.7.26): the host sent more data packets
/// than the controller had buffers for; some were dropped.
public struct DataBufferOverflowEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x1A
    public static let name = "Data Buffer Overflow"

    public var linkType: DataBufferOverflowLinkType

    public init(linkType: DataBufferOverflowLinkType) { self.linkType = linkType }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        linkType = DataBufferOverflowLinkType(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(linkType.rawValue)
    }

    public var description: String { "Data Buffer Overflow \(linkType)" }
}
