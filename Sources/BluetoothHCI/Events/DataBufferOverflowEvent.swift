import BluetoothCore

/// Data Buffer Overflow (Core 6.0, Vol 4, Part E, 7.7.26): the host sent more data packets
/// than the controller had buffers for; some were dropped.
public struct DataBufferOverflowEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x1A
    public static let name = "Data Buffer Overflow"

    public var linkType: DataBufferOverflowLinkType = DataBufferOverflowLinkType(rawValue: 0)

    public init() {}

    public init(linkType: DataBufferOverflowLinkType) { self.linkType = linkType }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&linkType, field: "Link_Type")
        try coder.end()
    }

    public var description: String { "Data Buffer Overflow \(linkType)" }
}
