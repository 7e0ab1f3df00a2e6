import BluetoothCore
import BluetoothHCI
import Testing

/// Events other than LE Meta (Core 6.0, Vol 4, Part E, 7.7): code, parameter length, parameters.
@Suite(.timeLimit(.minutes(1))) struct HCIEventTests {
    @Test func commandComplete() throws {
        // Core 6.0, Vol 4, Part E, 7.7.14: Reset complete, 1 credit, status success.
        try expectEvent(.commandComplete(CommandCompleteEvent(numberOfHCICommandPackets: 1, opcode: ResetCommand.opcode, returnParameters: [0x00])),
                        "0e 04 01 03 0c 00")
    }

    @Test func commandStatus() throws {
        // LE Create Connection (0x200D) accepted, 1 credit.
        try expectEvent(.commandStatus(CommandStatusEvent(status: .success, numberOfHCICommandPackets: 1, opcode: LECreateConnectionCommand.opcode)),
                        "0f 04 00 01 0d 20")
    }

    @Test func numberOfCompletedPackets() throws {
        // Each handle followed by its count: (0x0040, 1), (0x0041, 2); length 1 + 2 × 4 = 9.
        // Matches Bumble's encoding of the same event.
        try expectEvent(.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(entries: [
            .init(connectionHandle: 0x0040, completedPackets: 1), .init(connectionHandle: 0x0041, completedPackets: 2),
        ])), "13 09 02 40 00 01 00 41 00 02 00")
        try expectEvent(.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(entries: [.init(connectionHandle: 0x0001, completedPackets: 3)])),
                        "13 05 01 01 00 03 00")
    }

    @Test func disconnectionComplete() throws {
        try expectEvent(.disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)),
                        "05 04 00 40 00 13")
    }

    @Test func hardwareError() throws {
        try expectEvent(.hardwareError(HardwareErrorEvent(hardwareCode: 0x01)), "10 01 01")
    }

    @Test func encryptionChange() throws {
        try expectEvent(.encryptionChange(EncryptionChangeEvent(connectionHandle: 0x0040, encryptionEnabled: .on)), "08 04 00 40 00 01")
        // A failure: PIN or Key Missing (0x06), encryption off.
        try expectEvent(.encryptionChange(EncryptionChangeEvent(status: .pinOrKeyMissing, connectionHandle: 0x0040, encryptionEnabled: .off)),
                        "08 04 06 40 00 00")
    }

    @Test func encryptionChangeV2() throws {
        // Event code 0x59, key size 16.
        try expectEvent(.encryptionChangeV2(EncryptionChangeV2Event(connectionHandle: 0x0040, encryptionEnabled: .on, encryptionKeySize: 16)),
                        "59 05 00 40 00 01 10")
    }

    @Test func encryptionKeyRefreshComplete() throws {
        try expectEvent(.encryptionKeyRefreshComplete(EncryptionKeyRefreshCompleteEvent(connectionHandle: 0x0040)), "30 03 00 40 00")
    }

    @Test func readRemoteVersionInformationComplete() throws {
        // Version 0x0C (5.3), company 0x0059 (Nordic), subversion 0x1234; length 8.
        try expectEvent(.readRemoteVersionInformationComplete(ReadRemoteVersionInformationCompleteEvent(
            connectionHandle: 0x0040, version: 0x0C, companyIdentifier: 0x0059, subversion: 0x1234)),
                        "0c 08 00 40 00 0c 59 00 34 12")
    }

    @Test func dataBufferOverflow() throws {
        try expectEvent(.dataBufferOverflow(DataBufferOverflowEvent(linkType: .acl)), "1a 01 01")
        // A link type from a later specification still decodes.
        try expectEvent(.dataBufferOverflow(DataBufferOverflowEvent(linkType: .init(rawValue: 0x02))), "1a 01 02")
    }

    @Test func unknownEventIsKept() throws {
        try expectEvent(.unknown(code: 0xFF, parameters: [0x12, 0x34]), "ff 02 12 34")
        try expectEvent(.unknown(code: 0x57, parameters: []), "57 00")
    }

    @Test func descriptionsNameTheEvent() throws {
        let event = try HCIEvent.decode(bytes("08 04 00 40 00 01"))
        #expect(event.description == "Encryption Change handle=0x0040 Success (0x00) encryption=on")
        #expect(HCIEvent.unknown(code: 0xFF, parameters: [1]).description == "Unknown event 0xFF [01]")
    }
}
