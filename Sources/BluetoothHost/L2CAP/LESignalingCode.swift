import BluetoothCore
/// The Code of an L2CAP signalling command (Core 6.0, Vol 3, Part A, 4).
///
/// Kept as a raw value so that codes this stack does not handle (including BR/EDR-only
/// ones, which are not valid on the LE signalling channel) can be answered with a Command
/// Reject instead of being dropped.
public struct LESignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = LESignalingCode(rawValue: 0x01)
    public static let disconnectionRequest = LESignalingCode(rawValue: 0x06)
    public static let disconnectionResponse = LESignalingCode(rawValue: 0x07)
    public static let connectionParameterUpdateRequest = LESignalingCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = LESignalingCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = LESignalingCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = LESignalingCode(rawValue: 0x15)
    public static let flowControlCreditIndication = LESignalingCode(rawValue: 0x16)
    public static let creditBasedConnectionRequest = LESignalingCode(rawValue: 0x17)
    public static let creditBasedConnectionResponse = LESignalingCode(rawValue: 0x18)
    public static let creditBasedReconfigureRequest = LESignalingCode(rawValue: 0x19)
    public static let creditBasedReconfigureResponse = LESignalingCode(rawValue: 0x1A)

    /// The name of the command in Vol 3, Part A, 4, or "Unknown" for a code it does not list.
    public var name: String { Self.names[rawValue] ?? "Unknown" }

    public var description: String {
        "\(name) (\(Hex.format(rawValue, digits: 2)))"
    }

    private static let names: [UInt8: String] = [
        0x01: "Command Reject", 0x02: "Connection Request", 0x03: "Connection Response",
        0x04: "Configuration Request", 0x05: "Configuration Response",
        0x06: "Disconnection Request", 0x07: "Disconnection Response",
        0x08: "Echo Request", 0x09: "Echo Response",
        0x0A: "Information Request", 0x0B: "Information Response",
        0x12: "Connection Parameter Update Request", 0x13: "Connection Parameter Update Response",
        0x14: "LE Credit Based Connection Request", 0x15: "LE Credit Based Connection Response",
        0x16: "Flow Control Credit Indication",
        0x17: "Credit Based Connection Request", 0x18: "Credit Based Connection Response",
        0x19: "Credit Based Reconfigure Request", 0x1A: "Credit Based Reconfigure Response",
    ]
}
