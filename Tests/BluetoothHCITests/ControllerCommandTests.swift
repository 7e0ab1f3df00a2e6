import BluetoothCore
import BluetoothHCI
import Testing

/// Link control, controller & baseband, informational and status parameter commands
/// (Core 6.0, Vol 4, Part E, 7.1, 7.3, 7.4, 7.5). Opcodes: OGF in the top 6 bits, OCF in the
/// low 10, sent least significant octet first; e.g. Reset = 0x03 << 10 | 0x003 = 0x0C03 → 03 0C.
@Suite(.timeLimit(.minutes(1))) struct ControllerCommandTests {
    @Test func reset() throws {
        // Core 6.0, Vol 4, Part E, 7.3.2: opcode 0x0C03, no parameters.
        try expectCommand(ResetCommand(), "03 0c 00")
    }

    @Test func setEventMask() throws {
        // The reset default 0x00001FFFFFFFFFFF, little endian.
        try expectCommand(SetEventMaskCommand(mask: .default), "01 0c 08 ff ff ff ff ff 1f 00 00")
        // LE host mask: bits 4 (0x10), 7 (0x80) → octet 0 = 0x90; bits 11, 15 → octet 1 = 0x88;
        // bit 25 → octet 3 = 0x02; bit 47 → octet 5 = 0x80; bit 61 (LE Meta) → octet 7 = 0x20.
        try expectCommand(SetEventMaskCommand(mask: .leHost), "01 0c 08 90 88 00 02 00 80 00 20")
    }

    @Test func writeLEHostSupport() throws {
        // LE_Supported_Host = 1, then the unused octet 0.
        try expectCommand(WriteLEHostSupportCommand(leSupportedHost: true), "6d 0c 02 01 00")
        try expectCommand(WriteLEHostSupportCommand(leSupportedHost: false), "6d 0c 02 00 00")
    }

    @Test func readLocalVersionInformation() throws {
        try expectCommand(ReadLocalVersionInformationCommand(), "01 10 00")
        // Command Complete: code 0x0E, length 12 = 3 (credits, opcode) + status + 8.
        try expectReturn(ReadLocalVersionInformationCommand.self,
                         .init(hciVersion: 0x0D, hciSubversion: 0x1234, lmpVersion: 0x0D, companyIdentifier: 0x0002, lmpSubversion: 0x5678),
                         "0e 0c 01 01 10 00 0d 34 12 0d 02 00 78 56")
    }

    @Test func readLocalSupportedCommands() throws {
        try expectCommand(ReadLocalSupportedCommandsCommand(), "02 10 00")
        // Reset is octet 5 bit 7, LE Set Extended Scan Parameters octet 37 bit 5,
        // LE Read Buffer Size [v2] octet 41 bit 5.
        var octets = [UInt8](repeating: 0, count: 64)
        octets[5] = 0x80
        octets[37] = 0x20
        octets[41] = 0x20
        let supported = SupportedCommands([.reset, .leSetExtendedScanParameters, .leReadBufferSizeV2])
        #expect(supported.octets == octets)
        // Length 68 = 3 + status + 64.
        try expectReturn(ReadLocalSupportedCommandsCommand.self, .init(supportedCommands: supported),
                         "0e 44 01 02 10 00" + Hex.encode(octets))
    }

    @Test func readLocalSupportedFeatures() throws {
        try expectCommand(ReadLocalSupportedFeaturesCommand(), "03 10 00")
        // Bit 38, LE Supported (Controller): octet 4 bit 6 = 0x40.
        try expectReturn(ReadLocalSupportedFeaturesCommand.self, .init(features: 1 << 38),
                         "0e 0c 01 03 10 00 00 00 00 00 40 00 00 00")
    }

    @Test func readBufferSize() throws {
        try expectCommand(ReadBufferSizeCommand(), "05 10 00")
        // ACL length 1021 (0x03FD), SCO length 60, 8 ACL and 1 SCO buffers; length 11.
        try expectReturn(ReadBufferSizeCommand.self,
                         .init(aclDataPacketLength: 1021, synchronousDataPacketLength: 60, totalNumACLDataPackets: 8, totalNumSynchronousDataPackets: 1),
                         "0e 0b 01 05 10 00 fd 03 3c 08 00 01 00")
    }

    @Test func readBDADDR() throws {
        try expectCommand(ReadBDADDRCommand(), "09 10 00")
        // The address goes least significant octet first.
        try expectReturn(ReadBDADDRCommand.self, .init(address: address("C0:FF:EE:00:11:22")),
                         "0e 0a 01 09 10 00 22 11 00 ee ff c0")
    }

    @Test func readRSSI() throws {
        // OGF 0x05 (status parameters), OCF 0x0005 → 0x1405.
        try expectCommand(ReadRSSICommand(connectionHandle: 0x0040), "05 14 02 40 00")
        // -60 dBm = 0xC4.
        try expectReturn(ReadRSSICommand.self, .init(connectionHandle: 0x0040, rssi: -60), "0e 07 01 05 14 00 40 00 c4")
    }

    @Test func disconnect() throws {
        // OGF 0x01, OCF 0x0006 → 0x0406; reason 0x13 Remote User Terminated Connection.
        try expectCommand(DisconnectCommand(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection), "06 04 03 40 00 13")
        #expect(DisconnectCommand.acknowledgement == .commandStatus)
    }

    @Test func readRemoteVersionInformation() throws {
        try expectCommand(ReadRemoteVersionInformationCommand(connectionHandle: 0x0040), "1d 04 02 40 00")
        #expect(ReadRemoteVersionInformationCommand.acknowledgement == .commandStatus)
    }

    @Test func connectionHandlesKeepTwelveBits() throws {
        // The top four bits of a handle field are not part of the handle.
        let command = try DisconnectCommand.decode(parameters: bytes("40 f0 13"))
        #expect(command.connectionHandle == 0x0040)
        #expect(DisconnectCommand(connectionHandle: 0xF040, reason: .success).encode() == bytes("06 04 03 40 00 00"))
    }
}
