import BluetoothCore

/// Hardware Error (Core 6.0, Vol 4, Part E, 7.7.16): the controller hit a fault; the code is
/// vendor specific. The host usually resets the controller.
public struct HardwareErrorEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x10
    public static let name = "Hardware Error"

    public var hardwareCode: UInt8 = 0

    public init() {}

    public init(hardwareCode: UInt8) { self.hardwareCode = hardwareCode }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&hardwareCode)
        try coder.end()
    }

    public var description: String { "Hardware Error code=\(Hex.format(hardwareCode))" }
}
