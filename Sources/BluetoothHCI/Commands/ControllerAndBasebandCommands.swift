import BluetoothCore

/// Set Event Mask (Core 6.0, Vol 4, Part E, 7.3.1): which events the controller may send.
public struct SetEventMaskCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.controllerAndBaseband, command: 0x0001)
    public static let name = "Set Event Mask"

    public var mask: EventMask = []

    public init() {}

    public init(mask: EventMask) { self.mask = mask }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint64(&mask, field: "Event_Mask")
    }
}

/// Reset (Core 6.0, Vol 4, Part E, 7.3.2).
public struct ResetCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.controllerAndBaseband, command: 0x0003)
    public static let name = "Reset"
    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Write LE Host Support (Core 6.0, Vol 4, Part E, 7.3.79): tells a dual-mode controller that
/// the host supports LE. The second parameter (formerly Simultaneous_LE_Host) is unused and
/// written as 0x00.
public struct WriteLEHostSupportCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.controllerAndBaseband, command: 0x006D)
    public static let name = "Write LE Host Support"

    public var leSupportedHost = false

    public init() {}

    public init(leSupportedHost: Bool) { self.leSupportedHost = leSupportedHost }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bool(&leSupportedHost, field: "LE_Supported_Host")
        // Unused: the controller ignores its value (Core 6.0, Vol 4, Part E, 7.3.79).
        try coder.reserved(octets: 1)
    }
}
