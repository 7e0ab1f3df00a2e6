import BluetoothCore
import BluetoothHCI
import Testing

/// Status codes, opcodes, the command catalogue and the bit-field value types.
@Suite(.timeLimit(.minutes(1))) struct FoundationTests {
    @Test func statusNames() {
        #expect(HCIStatus.success.name == "Success")
        #expect(HCIStatus.success.isSuccess)
        #expect(!HCIStatus.commandDisallowed.isSuccess)
        #expect(HCIStatus.remoteUserTerminatedConnection.description == "Remote User Terminated Connection (0x13)")
        #expect(HCIStatus.unknownConnectionIdentifier.description == "Unknown Connection Identifier (0x02)")
        #expect(HCIStatus.unacceptableConnectionParameters.name == "Unacceptable Connection Parameters")
        #expect(HCIStatus(rawValue: 0x3E).name == "Connection Failed to be Established / Synchronization Timeout")
        #expect(HCIStatus(rawValue: 0xFE).name == "Unknown Error Code")
        #expect(HCIStatus(rawValue: 0xFE).description == "Unknown Error Code (0xFE)")
    }

    @Test func opcodeGroupAndCommand() {
        let opcode = HCIOpcode(rawValue: 0x200D)
        #expect(opcode.group == HCIOpcode.leController)
        #expect(opcode.command == 0x000D)
        #expect(HCIOpcode(group: 0x03, command: 0x0003).rawValue == 0x0C03)
        #expect(HCIOpcode(group: 0x3F, command: 0x03FF).rawValue == 0xFFFF)
        // Out-of-range inputs are cut to their field widths.
        #expect(HCIOpcode(group: 0xFF, command: 0xFFFF).rawValue == 0xFFFF)
        #expect(HCIOpcode(rawValue: 0xFC01).group == 0x3F)
        #expect(HCIOpcode(rawValue: 0xFC01).command == 0x0001)
        #expect(LECreateConnectionCommand.opcode.description == "LE Create Connection (0x200D)")
        #expect(HCIOpcode(rawValue: 0xFC3F).description == "0xFC3F")
        #expect(HCIOpcode(rawValue: 0xFC09).description == "Zephyr Read Static Addresses (0xFC09)")
        #expect(HCIOpcode.noOperation.description == "0x0000")
    }

    @Test func catalogueOpcodesAreUniqueAndNamed() {
        let all = HCICommandCatalogue.all
        #expect(all.count == 64)
        #expect(Set(all.map { $0.opcode }).count == all.count)
        #expect(Set(all.map { $0.name }).count == all.count)
        for type in all {
            #expect(!type.name.isEmpty)
            #expect(HCICommandCatalogue.names[type.opcode] == type.name)
            #expect(HCICommandCatalogue.commandType(for: type.opcode) == type)
        }
    }

    @Test func catalogueAcknowledgements() {
        let byStatus = HCICommandCatalogue.all.filter { $0.acknowledgement == .commandStatus }.map { $0.name }.sorted()
        #expect(byStatus == [
            "Disconnect", "LE Connection Update", "LE Create Connection", "LE Enable Encryption", "LE Extended Create Connection",
            "LE Read Remote Features", "LE Set PHY", "Read Remote Version Information",
        ])
    }

    @Test func supportedCommandsBits() throws {
        var octets = [UInt8](repeating: 0, count: 64)
        octets[37] = 0b1110_0000 // 37/5, 37/6, 37/7
        octets[33] = 0b0100_0000 // 33/6
        octets[35] = 0b0101_0000 // 35/4, 35/6
        octets[41] = 0b0010_0000 // 41/5
        octets[36] = 0b0000_0100 // 36/2
        octets[24] = 0b0100_0000 // 24/6
        var reader = ByteReader(octets, context: "test")
        let supported = try SupportedCommands(reading: &reader)
        for command: SupportedCommands.Command in [
            .leSetExtendedScanParameters, .leSetExtendedScanEnable, .leExtendedCreateConnection, .leSetDataLength, .leReadPHY,
            .leSetPHY, .leReadBufferSizeV2, .leSetExtendedAdvertisingParameters, .writeLEHostSupport,
        ] {
            #expect(supported.contains(command), "\(command)")
        }
        #expect(supported.contains(octet: 37, bit: 5))
        #expect(!supported.contains(.leSetAdvertisingSetRandomAddress))
        #expect(!supported.contains(.reset))
        #expect(!supported.contains(octet: 64, bit: 0))
        #expect(!supported.contains(octet: 0, bit: 8))
        #expect(!supported.contains(octet: -1, bit: 0))
        #expect(SupportedCommands(octets: [0xFF]).octets.count == 64)
        #expect(SupportedCommands(octets: [0xFF]).contains(.disconnect))
    }

    @Test func supportedCommandsNeedsSixtyFourOctets() {
        var reader = ByteReader([UInt8](repeating: 0, count: 63), context: "Read Local Supported Commands")
        #expect(throws: PacketDecodingError.self) { _ = try SupportedCommands(reading: &reader) }
    }

    @Test func leFeatureBits() {
        // Core 6.0, Vol 6, Part B, 4.6.
        #expect(LEFeatures.encryption.rawValue == 1 << 0)
        #expect(LEFeatures.ping.rawValue == 1 << 4)
        #expect(LEFeatures.llPrivacy.rawValue == 1 << 6)
        #expect(LEFeatures.le2MPHY.rawValue == 1 << 8)
        #expect(LEFeatures.leCodedPHY.rawValue == 1 << 11)
        #expect(LEFeatures.extendedAdvertising.rawValue == 1 << 12)
        #expect(LEFeatures.periodicAdvertising.rawValue == 1 << 13)
        #expect(LEFeatures.channelSelectionAlgorithm2.rawValue == 1 << 14)
        #expect(LEFeatures.powerControlRequest.rawValue == 0x6_0000_0000)
        #expect(LEFeatures(rawValue: 0x5901).contains([.encryption, .le2MPHY, .leCodedPHY, .extendedAdvertising, .channelSelectionAlgorithm2]))
    }

    @Test func eventMaskBits() {
        // Bit n = event code n + 1.
        #expect(EventMask.disconnectionComplete.rawValue == 1 << 4)
        #expect(EventMask.leMeta.rawValue == 1 << 61)
        #expect(EventMask(eventCode: 0).rawValue == 0)
        #expect(EventMask(eventCode: 65).rawValue == 0)
        #expect(LEEventMask.connectionComplete.rawValue == 1)
        #expect(LEEventMask.channelSelectionAlgorithm.rawValue == 1 << 19)
        #expect(LEEventMask.enhancedConnectionCompleteV2.rawValue == 1 << 40)
        #expect(LEEventMask(subeventCode: 0).rawValue == 0)
    }

    @Test func phySetDescription() {
        #expect(LEPhySet([.le1M, .leCoded]).description == "[1M,Coded]")
        #expect(LEPhySet(rawValue: 0x09).description == "[1M,0x8]")
    }
}
