import BluetoothCore

/// Every command type this stack encodes, so the opcode of each can be named in logs and the
/// virtual controller can decode what a host sends.
public enum HCICommandCatalogue {
    public static let all: [any HCICommand.Type] = [
        // Link control (Core 6.0, Vol 4, Part E, 7.1)
        DisconnectCommand.self,
        ReadRemoteVersionInformationCommand.self,
        // Controller and baseband (7.3)
        SetEventMaskCommand.self,
        ResetCommand.self,
        WriteLEHostSupportCommand.self,
        // Informational parameters (7.4)
        ReadLocalVersionInformationCommand.self,
        ReadLocalSupportedCommandsCommand.self,
        ReadLocalSupportedFeaturesCommand.self,
        ReadBufferSizeCommand.self,
        ReadBDADDRCommand.self,
        // Status parameters (7.5)
        ReadRSSICommand.self,
        // LE controller (7.8)
        LESetEventMaskCommand.self,
        LEReadBufferSizeCommand.self,
        LEReadBufferSizeV2Command.self,
        LEReadLocalSupportedFeaturesCommand.self,
        LESetRandomAddressCommand.self,
        LESetAdvertisingParametersCommand.self,
        LEReadAdvertisingPhysicalChannelTxPowerCommand.self,
        LESetAdvertisingDataCommand.self,
        LESetScanResponseDataCommand.self,
        LESetAdvertisingEnableCommand.self,
        LESetScanParametersCommand.self,
        LESetScanEnableCommand.self,
        LECreateConnectionCommand.self,
        LECreateConnectionCancelCommand.self,
        LEConnectionUpdateCommand.self,
        LEReadRemoteFeaturesCommand.self,
        LEEncryptCommand.self,
        LERandCommand.self,
        LEEnableEncryptionCommand.self,
        LELongTermKeyRequestReplyCommand.self,
        LELongTermKeyRequestNegativeReplyCommand.self,
        LERemoteConnectionParameterRequestReplyCommand.self,
        LERemoteConnectionParameterRequestNegativeReplyCommand.self,
        LESetDataLengthCommand.self,
        LEWriteSuggestedDefaultDataLengthCommand.self,
        LEAddDeviceToResolvingListCommand.self,
        LERemoveDeviceFromResolvingListCommand.self,
        LEClearResolvingListCommand.self,
        LEReadResolvingListSizeCommand.self,
        LESetAddressResolutionEnableCommand.self,
        LESetResolvablePrivateAddressTimeoutCommand.self,
        LEReadMaximumDataLengthCommand.self,
        LEReadPHYCommand.self,
        LESetPHYCommand.self,
        LESetDefaultPHYCommand.self,
        LEReadSuggestedDefaultDataLengthCommand.self,
        LESetAdvertisingSetRandomAddressCommand.self,
        LESetExtendedAdvertisingParametersCommand.self,
        LESetExtendedAdvertisingDataCommand.self,
        LESetExtendedScanResponseDataCommand.self,
        LESetExtendedAdvertisingEnableCommand.self,
        LEReadMaximumAdvertisingDataLengthCommand.self,
        LEReadNumberOfSupportedAdvertisingSetsCommand.self,
        LERemoveAdvertisingSetCommand.self,
        LEClearAdvertisingSetsCommand.self,
        LESetExtendedScanParametersCommand.self,
        LESetExtendedScanEnableCommand.self,
        LEExtendedCreateConnectionCommand.self,
        LEReadFilterAcceptListSizeCommand.self,
        LESetPrivacyModeCommand.self,
        // Vendor-specific: Zephyr's (include/zephyr/bluetooth/hci_vs.h)
        ZephyrReadVersionInformationCommand.self,
        ZephyrReadSupportedCommandsCommand.self,
        ZephyrReadStaticAddressesCommand.self,
    ]

    public static let names: [HCIOpcode: String] = Dictionary(
        all.map { ($0.opcode, $0.name) }, uniquingKeysWith: { first, _ in first }
    )

    private static let byOpcode: [HCIOpcode: any HCICommand.Type] = Dictionary(
        all.map { ($0.opcode, $0) }, uniquingKeysWith: { first, _ in first }
    )

    /// The command type with this opcode, if the catalogue has one.
    public static func commandType(for opcode: HCIOpcode) -> (any HCICommand.Type)? {
        byOpcode[opcode]
    }

    /// Decodes a command packet into its command value, as the virtual controller does.
    /// Throws `PacketDecodingError/unknownOpcode(context:opcode:)` for an opcode not in
    /// the catalogue, and the command's own errors for malformed parameters.
    public static func decode(_ packet: HCICommandPacket) throws(PacketDecodingError) -> any HCICommand {
        guard let type = byOpcode[packet.opcode] else {
            throw .unknownOpcode(context: "HCI command", opcode: UInt64(packet.opcode.rawValue))
        }
        return try type.decode(parameters: packet.parameters)
    }
}
