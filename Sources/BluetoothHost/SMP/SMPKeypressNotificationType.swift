/// The Notification Type of a Keypress Notification (Core 6.0, Vol 3, Part H, 3.5.8).
/// Values 0x05…0xFF are reserved and rejected by the decoder.
public enum SMPKeypressNotificationType: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case passkeyEntryStarted = 0x00
    case passkeyDigitEntered = 0x01
    case passkeyDigitErased = 0x02
    case passkeyCleared = 0x03
    case passkeyEntryCompleted = 0x04

    public var description: String {
        switch self {
        case .passkeyEntryStarted: return "Passkey entry started"
        case .passkeyDigitEntered: return "Passkey digit entered"
        case .passkeyDigitErased: return "Passkey digit erased"
        case .passkeyCleared: return "Passkey cleared"
        case .passkeyEntryCompleted: return "Passkey entry completed"
        }
    }
}
