import BluetoothCore

/// A 16-bit HCI command opcode: a 6-bit group (OGF) and a 10-bit command (OCF)
/// (Core 6.0, Vol 4, Part E, 5.4.1).
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(group: UInt8, command: UInt16) {
        rawValue = UInt16(group & 0x3F) << 10 | (command & 0x03FF)
    }

    public var group: UInt8 { UInt8(rawValue >> 10) }
    public var command: UInt16 { rawValue & 0x03FF }

    /// Opcode 0x0000 in a Command Complete only returns command credits.
    public static let noOperation = HCIOpcode(rawValue: 0)

    public static let linkControl: UInt8 = 0x01
    public static let controllerAndBaseband: UInt8 = 0x03
    public static let informational: UInt8 = 0x04
    public static let statusParameters: UInt8 = 0x05
    public static let leController: UInt8 = 0x08

    public var description: String {
        let code = Hex.format(rawValue, digits: 4)
        if let name = HCIOpcode.names[self] { return "\(name) (\(code))" }
        return code
    }

    /// Names of the commands this stack knows, filled by the command catalogue.
    public static var names: [HCIOpcode: String] { HCICommandCatalogue.names }
}
