import BluetoothCore
/// The Reason of a Pairing Failed command (Core 6.0, Vol 3, Part H, 3.5.5).
/// Unknown values are kept so a peer's future reason is still reported.
public struct SMPPairingFailureReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let passkeyEntryFailed = Self(rawValue: 0x01)
    public static let oobNotAvailable = Self(rawValue: 0x02)
    public static let authenticationRequirements = Self(rawValue: 0x03)
    public static let confirmValueFailed = Self(rawValue: 0x04)
    public static let pairingNotSupported = Self(rawValue: 0x05)
    public static let encryptionKeySize = Self(rawValue: 0x06)
    public static let commandNotSupported = Self(rawValue: 0x07)
    public static let unspecifiedReason = Self(rawValue: 0x08)
    public static let repeatedAttempts = Self(rawValue: 0x09)
    public static let invalidParameters = Self(rawValue: 0x0A)
    public static let dhKeyCheckFailed = Self(rawValue: 0x0B)
    public static let numericComparisonFailed = Self(rawValue: 0x0C)
    public static let brEdrPairingInProgress = Self(rawValue: 0x0D)
    public static let crossTransportKeyDerivationNotAllowed = Self(rawValue: 0x0E)
    public static let keyRejected = Self(rawValue: 0x0F)
    public static let busy = Self(rawValue: 0x10)

    /// The specification's name, or "Reserved".
    public var name: String {
        switch rawValue {
        case 0x01: return "Passkey Entry Failed"
        case 0x02: return "OOB Not Available"
        case 0x03: return "Authentication Requirements"
        case 0x04: return "Confirm Value Failed"
        case 0x05: return "Pairing Not Supported"
        case 0x06: return "Encryption Key Size"
        case 0x07: return "Command Not Supported"
        case 0x08: return "Unspecified Reason"
        case 0x09: return "Repeated Attempts"
        case 0x0A: return "Invalid Parameters"
        case 0x0B: return "DHKey Check Failed"
        case 0x0C: return "Numeric Comparison Failed"
        case 0x0D: return "BR/EDR pairing in progress"
        case 0x0E: return "Cross-transport Key Derivation/Generation not allowed"
        case 0x0F: return "Key Rejected"
        case 0x10: return "Busy"
        default: return "Reserved"
        }
    }

    /// `"Pairing Not Supported (0x05)"`.
    public var description: String { "\(name) (\(Hex.format(rawValue, digits: 2)))" }
}
