import BluetoothCore
/// One LE PHY, as reported by LE Read PHY, LE PHY Update Complete and advertising reports
/// (Core 6.0, Vol 4, Part E, 7.8.47 and 7.7.65.12).
public enum LEPhy: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case le1M = 0x01
    case le2M = 0x02
    /// LE Coded (with S=8 coding in advertising reports).
    case leCoded = 0x03
    /// LE Coded with S=2 coding: appears only in advertising reports of controllers with the
    /// Advertising Coding Selection feature (Core 6.0, Vol 4, Part E, 7.7.65.13).
    case leCodedS2 = 0x04

    public var description: String {
        switch self {
        case .le1M: return "LE 1M"
        case .le2M: return "LE 2M"
        case .leCoded: return "LE Coded"
        case .leCodedS2: return "LE Coded S=2"
        }
    }
}

/// A set of LE PHYs: the TX_PHYS, RX_PHYS, Scanning_PHYs and Initiating_PHYs bit fields
/// (Core 6.0, Vol 4, Part E, 7.8.49, 7.8.64, 7.8.66).
public struct LEPhySet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let le1M = LEPhySet(rawValue: 1 << 0)
    public static let le2M = LEPhySet(rawValue: 1 << 1)
    public static let leCoded = LEPhySet(rawValue: 1 << 2)
    /// Every bit this stack knows.
    public static let all: LEPhySet = [.le1M, .le2M, .leCoded]

    public var description: String {
        var names: [String] = []
        if contains(.le1M) { names.append("1M") }
        if contains(.le2M) { names.append("2M") }
        if contains(.leCoded) { names.append("Coded") }
        let reserved = rawValue & ~LEPhySet.all.rawValue
        if reserved != 0 { names.append("\(Hex.format(reserved))") }
        return "[" + names.joined(separator: ",") + "]"
    }
}

/// The ALL_PHYS parameter of LE Set PHY (Core 6.0, Vol 4, Part E, 7.8.49): which directions
/// the host leaves to the controller.
public struct LEAllPHYsPreference: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The host has no preference among the transmitter PHYs (TX_PHYS is ignored).
    public static let noTransmitPreference = LEAllPHYsPreference(rawValue: 1 << 0)
    /// The host has no preference among the receiver PHYs (RX_PHYS is ignored).
    public static let noReceivePreference = LEAllPHYsPreference(rawValue: 1 << 1)
}

/// The PHY_Options of LE Set PHY (Core 6.0, Vol 4, Part E, 7.8.49): the preferred coding when
/// transmitting on LE Coded.
public enum LECodedPHYOptions: UInt16, Sendable, Hashable, CaseIterable {
    case noPreference = 0x0000
    case preferS2 = 0x0001
    case preferS8 = 0x0002
}
