import BluetoothCore

/// Set Event Mask (Core 6.0, Vol 4, Part E, 7.3.1): which events the controller may send.
public struct SetEventMaskCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.controllerAndBaseband, command: 0x0001)
    public static let name = "Set Event Mask"

    public var mask: EventMask

    public init(mask: EventMask) { self.mask = mask }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        mask = EventMask(rawValue: try reader.readUInt64())
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(mask.rawValue)
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
public struct WriteLEHostSupportCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.controllerAndBaseband, command: 0x006D)
    public static let name = "Write LE Host Support"

    public var leSupportedHost: Bool

    public init(leSupportedHost: Bool) { self.leSupportedHost = leSupportedHost }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        leSupportedHost = try reader.readBool(field: "LE_Supported_Host")
        // Unused: the controller ignores its value (Core 6.0, Vol 4, Part E, 7.3.79).
        try reader.skip(1)
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(leSupportedHost)
        writer.write(UInt8(0))
    }
}
