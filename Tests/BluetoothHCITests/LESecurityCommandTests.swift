import BluetoothCore
import BluetoothHCI
import Testing

/// LE encryption commands (Core 6.0, Vol 4, Part E, 7.8.22–7.8.26). Keys are held least
/// significant octet first, as on the wire.
@Suite(.timeLimit(.minutes(1))) struct LESecurityCommandTests {
    @Test func leEncryptWithTheFIPS197Vector() throws {
        // FIPS-197 Appendix C.1: key 000102…0F, plaintext 00112233…FF, ciphertext
        // 69C4E0D86A7B0430D8CDB78070B4C55A, all most significant octet first. HCI sends them
        // least significant first, so each is reversed on the wire (Core 6.0, Vol 4, Part E, 7.8.22).
        let key = Array(bytes("000102030405060708090a0b0c0d0e0f").reversed())
        let plaintext = Array(bytes("00112233445566778899aabbccddeeff").reversed())
        let ciphertext = Array(bytes("69c4e0d86a7b0430d8cdb78070b4c55a").reversed())
        try expectCommand(LEEncryptCommand(key: key, plaintext: plaintext),
                          "17 20 20 0f 0e 0d 0c 0b 0a 09 08 07 06 05 04 03 02 01 00 ff ee dd cc bb aa 99 88 77 66 55 44 33 22 11 00")
        // Length 20 = 3 + status + 16.
        try expectReturn(LEEncryptCommand.self, .init(encryptedData: ciphertext),
                         "0e 14 01 17 20 00 5a c5 b4 70 80 b7 cd d8 30 04 7b 6a d8 e0 c4 69")
    }

    @Test func leRand() throws {
        try expectCommand(LERandCommand(), "18 20 00")
        try expectReturn(LERandCommand.self, .init(randomNumber: 0x0123_4567_89AB_CDEF), "0e 0c 01 18 20 00 ef cd ab 89 67 45 23 01")
    }

    @Test func leEnableEncryption() throws {
        // Handle, Rand (8, LSB first), EDIV (2), LTK (16); length 28.
        let command = LEEnableEncryptionCommand(connectionHandle: 0x0040, randomNumber: 0x0123_4567_89AB_CDEF,
                                                encryptedDiversifier: 0x1234, longTermKey: sequentialKey)
        try expectCommand(command, "19 20 1c 40 00 ef cd ab 89 67 45 23 01 34 12 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f")
        #expect(LEEnableEncryptionCommand.acknowledgement == .commandStatus)
    }

    @Test func leLongTermKeyRequestReply() throws {
        try expectCommand(LELongTermKeyRequestReplyCommand(connectionHandle: 0x0040, longTermKey: sequentialKey),
                          "1a 20 12 40 00 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f")
        try expectReturn(LELongTermKeyRequestReplyCommand.self, .init(connectionHandle: 0x0040), "0e 06 01 1a 20 00 40 00")
    }

    @Test func leLongTermKeyRequestNegativeReply() throws {
        try expectCommand(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: 0x0040), "1b 20 02 40 00")
        try expectReturn(LELongTermKeyRequestNegativeReplyCommand.self, .init(connectionHandle: 0x0040), "0e 06 01 1b 20 00 40 00")
    }

    @Test func shortKeysArePaddedToSixteenOctets() {
        let command = LELongTermKeyRequestReplyCommand(connectionHandle: 1, longTermKey: [0xAA])
        #expect(command.encode() == bytes("1a 20 12 01 00 aa 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))
    }

    @Test func truncatedKeyIsRejected() {
        #expect(throws: PacketDecodingError.self) {
            _ = try LELongTermKeyRequestReplyCommand.decode(parameters: bytes("40 00 00 01 02"))
        }
    }
}
