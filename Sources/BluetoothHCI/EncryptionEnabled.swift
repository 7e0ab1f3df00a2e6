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
