import BluetoothCore
/// An L2CAP channel identifier (Core 6.0, Vol 3, Part A, 2.1).
///
/// On LE the fixed channels are ATT, LE signalling and the Security Manager; CIDs
/// 0x0040…0x007F are allocated dynamically to credit-based channels.
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The null identifier; never used as a destination (Vol 3, Part A, 2.1).
    public static let null = L2CAPChannelID(rawValue: 0x0000)
    /// The Attribute Protocol fixed channel (Vol 3, Part A, 2.1).
    public static let att = L2CAPChannelID(rawValue: 0x0004)
    /// The LE signalling channel (Vol 3, Part A, 2.1).
    public static let leSignaling = L2CAPChannelID(rawValue: 0x0005)
    /// The Security Manager Protocol fixed channel (Vol 3, Part A, 2.1).
    public static let securityManager = L2CAPChannelID(rawValue: 0x0006)

    /// The CIDs an LE device may allocate dynamically (Vol 3, Part A, 2.1).
    public static let leDynamicRange: ClosedRange<UInt16> = 0x0040...0x007F

    /// Whether this CID lies in the LE dynamically allocated range.
    public var isLEDynamic: Bool { Self.leDynamicRange.contains(rawValue) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        let hex = Hex.format(rawValue, digits: 4)
        switch self {
        case .att: return "\(hex) (ATT)"
        case .leSignaling: return "\(hex) (LE signaling)"
        case .securityManager: return "\(hex) (SMP)"
        default: return hex
        }
    }
}
