import BluetoothCore

/// The LE features of a controller or a peer: page 0 of the FeatureSet
/// (Core 6.0, Vol 6, Part B, 4.6), as returned by LE Read Local Supported Features and
/// LE Read Remote Features Complete.
public struct LEFeatures: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private init(bit: UInt64) { rawValue = 1 << bit }

    public static let encryption = LEFeatures(bit: 0)
    public static let connectionParametersRequest = LEFeatures(bit: 1)
    public static let extendedReject = LEFeatures(bit: 2)
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(bit: 3)
    public static let ping = LEFeatures(bit: 4)
    public static let dataPacketLengthExtension = LEFeatures(bit: 5)
    public static let llPrivacy = LEFeatures(bit: 6)
    public static let extendedScannerFilterPolicies = LEFeatures(bit: 7)
    public static let le2MPHY = LEFeatures(bit: 8)
    public static let stableModulationIndexTransmitter = LEFeatures(bit: 9)
    public static let stableModulationIndexReceiver = LEFeatures(bit: 10)
    public static let leCodedPHY = LEFeatures(bit: 11)
    public static let extendedAdvertising = LEFeatures(bit: 12)
    public static let periodicAdvertising = LEFeatures(bit: 13)
    public static let channelSelectionAlgorithm2 = LEFeatures(bit: 14)
    public static let powerClass1 = LEFeatures(bit: 15)
    public static let minimumNumberOfUsedChannels = LEFeatures(bit: 16)
    public static let connectionCTERequest = LEFeatures(bit: 17)
    public static let connectionCTEResponse = LEFeatures(bit: 18)
    public static let connectionlessCTETransmitter = LEFeatures(bit: 19)
    public static let connectionlessCTEReceiver = LEFeatures(bit: 20)
    public static let antennaSwitchingDuringCTETransmission = LEFeatures(bit: 21)
    public static let antennaSwitchingDuringCTEReception = LEFeatures(bit: 22)
    public static let receivingConstantToneExtensions = LEFeatures(bit: 23)
    public static let periodicAdvertisingSyncTransferSender = LEFeatures(bit: 24)
    public static let periodicAdvertisingSyncTransferRecipient = LEFeatures(bit: 25)
    public static let sleepClockAccuracyUpdates = LEFeatures(bit: 26)
    public static let remotePublicKeyValidation = LEFeatures(bit: 27)
    public static let connectedIsochronousStreamCentral = LEFeatures(bit: 28)
    public static let connectedIsochronousStreamPeripheral = LEFeatures(bit: 29)
    public static let isochronousBroadcaster = LEFeatures(bit: 30)
    public static let synchronizedReceiver = LEFeatures(bit: 31)
    public static let connectedIsochronousStreamHostSupport = LEFeatures(bit: 32)
    /// LE Power Control Request; the specification assigns bits 33 and 34 to it together.
    public static let powerControlRequest = LEFeatures(rawValue: 1 << 33 | 1 << 34)
    public static let pathLossMonitoring = LEFeatures(bit: 35)
    public static let periodicAdvertisingADISupport = LEFeatures(bit: 36)
    public static let connectionSubrating = LEFeatures(bit: 37)
    public static let connectionSubratingHostSupport = LEFeatures(bit: 38)
    public static let channelClassification = LEFeatures(bit: 39)
    public static let advertisingCodingSelection = LEFeatures(bit: 40)
    public static let advertisingCodingSelectionHostSupport = LEFeatures(bit: 41)
    public static let decisionBasedAdvertisingFiltering = LEFeatures(bit: 42)
    public static let periodicAdvertisingWithResponsesAdvertiser = LEFeatures(bit: 43)
    public static let periodicAdvertisingWithResponsesScanner = LEFeatures(bit: 44)
    public static let unsegmentedFramedMode = LEFeatures(bit: 45)
    public static let channelSounding = LEFeatures(bit: 46)
    public static let channelSoundingHostSupport = LEFeatures(bit: 47)
    public static let channelSoundingToneQualityIndication = LEFeatures(bit: 48)
    /// The peer supports the LL extended feature set (pages beyond 0).
    public static let llExtendedFeatureSet = LEFeatures(bit: 63)

    public var description: String {
        "LEFeatures(0x" + Hex.digits(rawValue, count: 16, uppercase: false) + ")"
    }
}
