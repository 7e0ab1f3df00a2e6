import BluetoothCore
/// The role of the local device on a connection (Core 6.0, Vol 4, Part E, 7.7.65.1, Role).
public enum ConnectionRole: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case central = 0x00
    case peripheral = 0x01

    public var description: String { self == .central ? "central" : "peripheral" }
}

/// The sleep clock accuracy of the central (Core 6.0, Vol 4, Part E, 7.7.65.1,
/// Central_Clock_Accuracy; Vol 6, Part B, 2.3.3.1).
public enum ClockAccuracy: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case ppm500 = 0x00
    case ppm250 = 0x01
    case ppm150 = 0x02
    case ppm100 = 0x03
    case ppm75 = 0x04
    case ppm50 = 0x05
    case ppm30 = 0x06
    case ppm20 = 0x07

    /// The worst-case accuracy in parts per million.
    public var partsPerMillion: Int {
        switch self {
        case .ppm500: return 500
        case .ppm250: return 250
        case .ppm150: return 150
        case .ppm100: return 100
        case .ppm75: return 75
        case .ppm50: return 50
        case .ppm30: return 30
        case .ppm20: return 20
        }
    }

    public var description: String { "\(partsPerMillion) ppm" }
}

/// The Encryption_Enabled parameter of Encryption Change (Core 6.0, Vol 4, Part E, 7.7.8).
public enum EncryptionEnabled: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Link level encryption is off.
    case off = 0x00
    /// Encryption is on: AES-CCM on an LE link (E0 on BR/EDR).
    case on = 0x01
    /// Encryption is on with AES-CCM on a BR/EDR link.
    case aesCCM = 0x02

    public var isEncrypted: Bool { self != .off }

    public var description: String {
        switch self {
        case .off: return "off"
        case .on: return "on"
        case .aesCCM: return "on (AES-CCM)"
        }
    }
}

/// The Link_Type of Data Buffer Overflow (Core 6.0, Vol 4, Part E, 7.7.26). A struct, not an
/// enum, so that a link type added by a later specification still decodes.
public struct DataBufferOverflowLinkType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Synchronous (voice) buffers overflowed.
    public static let synchronous = DataBufferOverflowLinkType(rawValue: 0x00)
    /// ACL data buffers overflowed.
    public static let acl = DataBufferOverflowLinkType(rawValue: 0x01)

    public var description: String {
        switch self {
        case .synchronous: return "synchronous"
        case .acl: return "ACL"
        default: return "link type \(Hex.format(rawValue))"
        }
    }
}

/// The channel selection algorithm of a connection (Core 6.0, Vol 4, Part E, 7.7.65.20).
public enum ChannelSelectionAlgorithm: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case algorithm1 = 0x00
    case algorithm2 = 0x01

    public var description: String { self == .algorithm1 ? "#1" : "#2" }
}
