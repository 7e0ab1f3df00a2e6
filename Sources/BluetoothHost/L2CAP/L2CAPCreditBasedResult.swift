import BluetoothCore
/// The Result of L2CAP_LE_CREDIT_BASED_CONNECTION_RSP (Core 6.0, Vol 3, Part A, 4.23) and
/// of L2CAP_CREDIT_BASED_CONNECTION_RSP (4.26), which share their code points.
public struct L2CAPCreditBasedConnectionResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let success = Self(rawValue: 0x0000)
    public static let spsmNotSupported = Self(rawValue: 0x0002)
    public static let noResourcesAvailable = Self(rawValue: 0x0004)
    public static let insufficientAuthentication = Self(rawValue: 0x0005)
    public static let insufficientAuthorization = Self(rawValue: 0x0006)
    public static let encryptionKeySizeTooShort = Self(rawValue: 0x0007)
    public static let insufficientEncryption = Self(rawValue: 0x0008)
    public static let invalidSourceCID = Self(rawValue: 0x0009)
    public static let sourceCIDAlreadyAllocated = Self(rawValue: 0x000A)
    public static let unacceptableParameters = Self(rawValue: 0x000B)
    /// Enhanced (L2CAP_CREDIT_BASED_CONNECTION_RSP) only.
    public static let invalidParameters = Self(rawValue: 0x000C)

    public var isSuccess: Bool { rawValue == 0 }

    public var name: String {
        switch rawValue {
        case 0x0000: return "Connection successful"
        case 0x0002: return "Connection refused – SPSM not supported"
        case 0x0004: return "Connection refused – no resources available"
        case 0x0005: return "Connection refused – insufficient authentication"
        case 0x0006: return "Connection refused – insufficient authorization"
        case 0x0007: return "Connection refused – encryption key size too short"
        case 0x0008: return "Connection refused – insufficient encryption"
        case 0x0009: return "Connection refused – invalid Source CID"
        case 0x000A: return "Connection refused – Source CID already allocated"
        case 0x000B: return "Connection refused – unacceptable parameters"
        case 0x000C: return "Connection refused – invalid parameters"
        default: return "Reserved"
        }
    }

    public var description: String { "\(name) (\(Hex.format(rawValue, digits: 4)))" }
}

/// The Result of L2CAP_CREDIT_BASED_RECONFIGURE_RSP (Core 6.0, Vol 3, Part A, 4.28).
public struct L2CAPCreditBasedReconfigureResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let success = Self(rawValue: 0x0000)
    public static let mtuReductionNotAllowed = Self(rawValue: 0x0001)
    public static let mpsReductionNotAllowed = Self(rawValue: 0x0002)
    public static let invalidDestinationCID = Self(rawValue: 0x0003)
    public static let unacceptableParameters = Self(rawValue: 0x0004)

    public var name: String {
        switch rawValue {
        case 0x0000: return "Reconfiguration successful"
        case 0x0001: return "Reconfiguration failed – reduction in size of MTU not allowed"
        case 0x0002: return "Reconfiguration failed – reduction in size of MPS not allowed for more than one channel at a time"
        case 0x0003: return "Reconfiguration failed – one or more Destination CIDs invalid"
        case 0x0004: return "Reconfiguration failed – other unacceptable parameters"
        default: return "Reserved"
        }
    }

    public var description: String { "\(name) (\(Hex.format(rawValue, digits: 4)))" }
}
