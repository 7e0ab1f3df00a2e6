/// The Event_Mask of Set Event Mask (Core 6.0, Vol 4, Part E, 7.3.1): which events the
/// controller may send. For page 1 the bit of an event is its event code minus one.
public struct EventMask: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The bit of the event with code `eventCode` (1...64).
    public init(eventCode: UInt8) {
        rawValue = (1...64).contains(eventCode) ? 1 << UInt64(eventCode - 1) : 0
    }

    public static let disconnectionComplete = EventMask(eventCode: 0x05)
    public static let encryptionChange = EventMask(eventCode: 0x08)
    public static let readRemoteVersionInformationComplete = EventMask(eventCode: 0x0C)
    public static let hardwareError = EventMask(eventCode: 0x10)
    public static let dataBufferOverflow = EventMask(eventCode: 0x1A)
    public static let encryptionKeyRefreshComplete = EventMask(eventCode: 0x30)
    public static let leMeta = EventMask(eventCode: 0x3E)

    /// The mask a controller starts with after reset: 0x00001FFFFFFFFFFF.
    public static let `default` = EventMask(rawValue: 0x0000_1FFF_FFFF_FFFF)

    /// What an LE-only host needs.
    public static let leHost: EventMask = [
        .disconnectionComplete, .encryptionChange, .readRemoteVersionInformationComplete,
        .hardwareError, .dataBufferOverflow, .encryptionKeyRefreshComplete, .leMeta,
    ]
}

/// The LE_Event_Mask of LE Set Event Mask (Core 6.0, Vol 4, Part E, 7.8.1): which LE Meta
/// subevents the controller may send. The bit of a subevent is its subevent code minus one.
public struct LEEventMask: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The bit of the subevent with code `subeventCode` (1...64).
    public init(subeventCode: UInt8) {
        rawValue = (1...64).contains(subeventCode) ? 1 << UInt64(subeventCode - 1) : 0
    }

    public static let connectionComplete = LEEventMask(subeventCode: 0x01)
    public static let advertisingReport = LEEventMask(subeventCode: 0x02)
    public static let connectionUpdateComplete = LEEventMask(subeventCode: 0x03)
    public static let readRemoteFeaturesComplete = LEEventMask(subeventCode: 0x04)
    public static let longTermKeyRequest = LEEventMask(subeventCode: 0x05)
    public static let remoteConnectionParameterRequest = LEEventMask(subeventCode: 0x06)
    public static let dataLengthChange = LEEventMask(subeventCode: 0x07)
    public static let readLocalP256PublicKeyComplete = LEEventMask(subeventCode: 0x08)
    public static let generateDHKeyComplete = LEEventMask(subeventCode: 0x09)
    public static let enhancedConnectionComplete = LEEventMask(subeventCode: 0x0A)
    public static let directedAdvertisingReport = LEEventMask(subeventCode: 0x0B)
    public static let phyUpdateComplete = LEEventMask(subeventCode: 0x0C)
    public static let extendedAdvertisingReport = LEEventMask(subeventCode: 0x0D)
    public static let scanTimeout = LEEventMask(subeventCode: 0x11)
    public static let advertisingSetTerminated = LEEventMask(subeventCode: 0x12)
    public static let scanRequestReceived = LEEventMask(subeventCode: 0x13)
    public static let channelSelectionAlgorithm = LEEventMask(subeventCode: 0x14)
    public static let enhancedConnectionCompleteV2 = LEEventMask(subeventCode: 0x29)

    /// The mask a controller starts with after reset: the first five subevents (0x1F).
    public static let `default` = LEEventMask(rawValue: 0x1F)
}
