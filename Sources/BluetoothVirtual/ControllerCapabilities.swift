import BluetoothCore
import BluetoothHCI

/// What a virtual controller says about itself: the commands it implements (and advertises
/// in Read Local Supported Commands, no more and no fewer), its version and its features.
enum ControllerCapabilities {
    /// Every implemented command and its bit in the Supported_Commands bitmap
    /// (Core 6.0, Vol 4, Part E, 6.27). Read Local Supported Commands has no bit of its own.
    static let commands: [(type: any HCICommand.Type, bit: SupportedCommands.Command?)] = [
        (DisconnectCommand.self, .disconnect),
        (ReadRemoteVersionInformationCommand.self, .readRemoteVersionInformation),
        (SetEventMaskCommand.self, .setEventMask),
        (ResetCommand.self, .reset),
        (WriteLEHostSupportCommand.self, .writeLEHostSupport),
        (ReadLocalVersionInformationCommand.self, .readLocalVersionInformation),
        (ReadLocalSupportedCommandsCommand.self, nil),
        (ReadLocalSupportedFeaturesCommand.self, .readLocalSupportedFeatures),
        (ReadBufferSizeCommand.self, .readBufferSize),
        (ReadBDADDRCommand.self, .readBDADDR),
        (ReadRSSICommand.self, .readRSSI),
        (LESetEventMaskCommand.self, .leSetEventMask),
        (LEReadBufferSizeCommand.self, .leReadBufferSize),
        (LEReadBufferSizeV2Command.self, .leReadBufferSizeV2),
        (LEReadLocalSupportedFeaturesCommand.self, .leReadLocalSupportedFeatures),
        (LESetRandomAddressCommand.self, .leSetRandomAddress),
        (LESetAdvertisingParametersCommand.self, .leSetAdvertisingParameters),
        (LEReadAdvertisingPhysicalChannelTxPowerCommand.self, .leReadAdvertisingPhysicalChannelTxPower),
        (LESetAdvertisingDataCommand.self, .leSetAdvertisingData),
        (LESetScanResponseDataCommand.self, .leSetScanResponseData),
        (LESetAdvertisingEnableCommand.self, .leSetAdvertisingEnable),
        (LESetScanParametersCommand.self, .leSetScanParameters),
        (LESetScanEnableCommand.self, .leSetScanEnable),
        (LECreateConnectionCommand.self, .leCreateConnection),
        (LECreateConnectionCancelCommand.self, .leCreateConnectionCancel),
        (LEConnectionUpdateCommand.self, .leConnectionUpdate),
        (LEReadRemoteFeaturesCommand.self, .leReadRemoteFeatures),
        (LEEncryptCommand.self, .leEncrypt),
        (LERandCommand.self, .leRand),
        (LEEnableEncryptionCommand.self, .leEnableEncryption),
        (LELongTermKeyRequestReplyCommand.self, .leLongTermKeyRequestReply),
        (LELongTermKeyRequestNegativeReplyCommand.self, .leLongTermKeyRequestNegativeReply),
        (LERemoteConnectionParameterRequestReplyCommand.self, .leRemoteConnectionParameterRequestReply),
        (LERemoteConnectionParameterRequestNegativeReplyCommand.self, .leRemoteConnectionParameterRequestNegativeReply),
        (LESetDataLengthCommand.self, .leSetDataLength),
        (LEWriteSuggestedDefaultDataLengthCommand.self, .leWriteSuggestedDefaultDataLength),
        (LEAddDeviceToResolvingListCommand.self, .leAddDeviceToResolvingList),
        (LERemoveDeviceFromResolvingListCommand.self, .leRemoveDeviceFromResolvingList),
        (LEClearResolvingListCommand.self, .leClearResolvingList),
        (LEReadResolvingListSizeCommand.self, .leReadResolvingListSize),
        (LESetAddressResolutionEnableCommand.self, .leSetAddressResolutionEnable),
        (LESetResolvablePrivateAddressTimeoutCommand.self, .leSetResolvablePrivateAddressTimeout),
        (LESetPrivacyModeCommand.self, .leSetPrivacyMode),
        (LEReadMaximumDataLengthCommand.self, .leReadMaximumDataLength),
        (LEReadPHYCommand.self, .leReadPHY),
        (LESetPHYCommand.self, .leSetPHY),
        (LESetDefaultPHYCommand.self, .leSetDefaultPHY),
        (LEReadSuggestedDefaultDataLengthCommand.self, .leReadSuggestedDefaultDataLength),
        (LESetAdvertisingSetRandomAddressCommand.self, .leSetAdvertisingSetRandomAddress),
        (LESetExtendedAdvertisingParametersCommand.self, .leSetExtendedAdvertisingParameters),
        (LESetExtendedAdvertisingDataCommand.self, .leSetExtendedAdvertisingData),
        (LESetExtendedScanResponseDataCommand.self, .leSetExtendedScanResponseData),
        (LESetExtendedAdvertisingEnableCommand.self, .leSetExtendedAdvertisingEnable),
        (LEReadMaximumAdvertisingDataLengthCommand.self, .leReadMaximumAdvertisingDataLength),
        (LEReadNumberOfSupportedAdvertisingSetsCommand.self, .leReadNumberOfSupportedAdvertisingSets),
        (LERemoveAdvertisingSetCommand.self, .leRemoveAdvertisingSet),
        (LEClearAdvertisingSetsCommand.self, .leClearAdvertisingSets),
        (LESetExtendedScanParametersCommand.self, .leSetExtendedScanParameters),
        (LESetExtendedScanEnableCommand.self, .leSetExtendedScanEnable),
        (LEExtendedCreateConnectionCommand.self, .leExtendedCreateConnection),
    ]

    static let implementedOpcodes: Set<HCIOpcode> = Set(commands.map { $0.type.opcode })

    /// The Supported_Commands bitmap: exactly the implemented commands.
    static let supportedCommands = SupportedCommands(commands.compactMap(\.bit))

    /// LMP features page 0 (Core 6.0, Vol 2, Part C, 3.3): bit 37 "BR/EDR Not Supported" and
    /// bit 38 "LE Supported (Controller)": an LE-only controller.
    static let lmpFeatures: UInt64 = 1 << 37 | 1 << 38

    /// HCI and LMP/LL version 0x0D: Core 5.4 (Assigned Numbers, 2.1).
    static let version: UInt8 = 0x0D
    static let subversion: UInt16 = 0x0001
}
