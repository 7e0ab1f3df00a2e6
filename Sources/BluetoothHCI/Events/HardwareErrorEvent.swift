import BluetoothCore

/// Hardware Error (Core 6.0, Vol 4, Part E, 7.7.16): the controller hit a fault; the code is
/// vendor specific. The host usually resets the controller.
public struct HardwareErrorEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x10
    public static let name = "Hardware Error"

    public var hardwareCode: UInt8

    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        hardwareCode = try reader.readUInt8()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(hardwareCode)
    }

    public var description: String { "Hardware Error code=\(Hex.format(hardwareCode))" }
}
