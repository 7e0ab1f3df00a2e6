import BluetoothCore
import BluetoothHCI
import Testing

/// LE controller commands (Core 6.0, Vol 4, Part E, 7.8): OGF 0x08, so opcodes are 0x20xx.
@Suite(.timeLimit(.minutes(1))) struct LEControllerCommandTests {
    @Test func leSetEventMask() throws {
        // The reset default: the first five subevents.
        try expectCommand(LESetEventMaskCommand(mask: .default), "01 20 08 1f 00 00 00 00 00 00 00")
        // Subevent 0x29 is bit 40: octet 5 bit 0.
        try expectCommand(LESetEventMaskCommand(mask: [.connectionComplete, .enhancedConnectionCompleteV2]),
                          "01 20 08 01 00 00 00 00 01 00 00")
    }

    @Test func leReadBufferSize() throws {
        try expectCommand(LEReadBufferSizeCommand(), "02 20 00")
        // 251-octet buffers, 15 of them.
        try expectReturn(LEReadBufferSizeCommand.self, .init(leACLDataPacketLength: 251, totalNumLEACLDataPackets: 15),
                         "0e 07 01 02 20 00 fb 00 0f")
    }

    @Test func leReadBufferSizeV2() throws {
        try expectCommand(LEReadBufferSizeV2Command(), "60 20 00")
        // ISO: 300 (0x012C) octets, 8 buffers.
        try expectReturn(LEReadBufferSizeV2Command.self,
                         .init(leACLDataPacketLength: 251, totalNumLEACLDataPackets: 15, isoDataPacketLength: 300, totalNumISODataPackets: 8),
                         "0e 0a 01 60 20 00 fb 00 0f 2c 01 08")
    }

    @Test func leReadLocalSupportedFeatures() throws {
        try expectCommand(LEReadLocalSupportedFeaturesCommand(), "03 20 00")
        // Bits 0, 5 → octet 0 = 0x21; bits 8, 11, 12, 14 → octet 1 = 0x01 | 0x08 | 0x10 | 0x40 = 0x59.
        let features: LEFeatures = [.encryption, .dataPacketLengthExtension, .le2MPHY, .leCodedPHY, .extendedAdvertising, .channelSelectionAlgorithm2]
        try expectReturn(LEReadLocalSupportedFeaturesCommand.self, .init(features: features),
                         "0e 0c 01 03 20 00 21 59 00 00 00 00 00 00")
    }

    @Test func leSetRandomAddress() throws {
        try expectCommand(LESetRandomAddressCommand(address: address("C0:FF:EE:00:11:22")), "05 20 06 22 11 00 ee ff c0")
    }

    @Test func leSetDataLength() throws {
        // 251 octets (0x00FB), 2120 µs (0x0848).
        try expectCommand(LESetDataLengthCommand(connectionHandle: 0x0040, txOctets: 251, txTime: 2120), "22 20 06 40 00 fb 00 48 08")
        try expectReturn(LESetDataLengthCommand.self, .init(connectionHandle: 0x0040), "0e 06 01 22 20 00 40 00")
    }

    @Test func leWriteSuggestedDefaultDataLength() throws {
        try expectCommand(LEWriteSuggestedDefaultDataLengthCommand(suggestedMaxTxOctets: 251, suggestedMaxTxTime: 2120), "24 20 04 fb 00 48 08")
    }

    @Test func leReadMaximumDataLength() throws {
        try expectCommand(LEReadMaximumDataLengthCommand(), "2f 20 00")
        // 251 octets and 17040 µs (0x4290, LE Coded) both ways.
        try expectReturn(LEReadMaximumDataLengthCommand.self,
                         .init(supportedMaxTxOctets: 251, supportedMaxTxTime: 17040, supportedMaxRxOctets: 251, supportedMaxRxTime: 17040),
                         "0e 0c 01 2f 20 00 fb 00 90 42 fb 00 90 42")
    }

    @Test func leReadPHY() throws {
        try expectCommand(LEReadPHYCommand(connectionHandle: 0x0040), "30 20 02 40 00")
        try expectReturn(LEReadPHYCommand.self, .init(connectionHandle: 0x0040, txPHY: .le2M, rxPHY: .le1M), "0e 08 01 30 20 00 40 00 02 01")
    }

    @Test func leSetPHY() throws {
        // TX_PHYS bit 1 (2M) = 0x02, RX_PHYS bits 0, 1 = 0x03, PHY_Options 0x0000.
        try expectCommand(LESetPHYCommand(connectionHandle: 0x0040, txPHYs: .le2M, rxPHYs: [.le1M, .le2M]), "32 20 07 40 00 00 02 03 00 00")
        // ALL_PHYS bit 1 (no RX preference), TX Coded (bit 2), prefer S=8 (0x0002).
        try expectCommand(LESetPHYCommand(connectionHandle: 0x0040, allPHYs: .noReceivePreference, txPHYs: .leCoded, rxPHYs: [], phyOptions: .preferS8),
                          "32 20 07 40 00 02 04 00 02 00")
        #expect(LESetPHYCommand.acknowledgement == .commandStatus)
    }

    @Test func leSetDefaultPHY() throws {
        // ALL_PHYS 0, TX_PHYS 2M (0x02), RX_PHYS 1M + 2M (0x03); Command Complete, status only.
        try expectCommand(LESetDefaultPHYCommand(txPHYs: .le2M, rxPHYs: [.le1M, .le2M]), "31 20 03 00 02 03")
        try expectCommand(LESetDefaultPHYCommand(allPHYs: [.noTransmitPreference, .noReceivePreference], txPHYs: [], rxPHYs: []), "31 20 03 03 00 00")
        #expect(LESetDefaultPHYCommand.acknowledgement == .commandComplete)
    }

    @Test func leReadSuggestedDefaultDataLength() throws {
        try expectCommand(LEReadSuggestedDefaultDataLengthCommand(), "23 20 00")
        try expectReturn(LEReadSuggestedDefaultDataLengthCommand.self, .init(suggestedMaxTxOctets: 251, suggestedMaxTxTime: 2120),
                         "0e 08 01 23 20 00 fb 00 48 08")
    }
}
