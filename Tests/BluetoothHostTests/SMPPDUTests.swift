import BluetoothCore
import Testing
import BluetoothHost

private func expectRoundTrip(_ pdu: SMPPDU, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(pdu.encode() == bytes, sourceLocation: sourceLocation)
    #expect(try SMPPDU.decode(bytes) == pdu, sourceLocation: sourceLocation)
}

/// 0x00112233445566778899AABBCCDDEEFF, least significant octet first.
private let value128: UInt128 = 0x0011_2233_4455_6677_8899_AABB_CCDD_EEFF
private let value128Wire: [UInt8] = [0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x99, 0x88,
                                     0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00]

@Suite(.timeLimit(.minutes(1))) struct SMPPDUTests {
    @Test func pairingRequestAndResponseFromTheC1Example() throws {
        // Core 6.0, Vol 3, Part H, 2.2.3 (c1 example): preq = 0x07071000000101 and
        // pres = 0x05000800000302, i.e. on the wire (least significant octet first):
        // 01 | IO 01 | OOB 00 | AuthReq 00 | max key 0x10 | init keys 07 | resp keys 07
        try expectRoundTrip(.pairingRequest(SMPPairingFeatures(
            ioCapability: .displayYesNo, oobDataPresent: false, authenticationRequirements: [], maximumEncryptionKeySize: 16,
            initiatorKeyDistribution: [.encryptionKey, .identityKey, .signingKey],
            responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey])),
                            [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07])
        // 02 | IO 03 | OOB 00 | AuthReq 00 | max key 8 | init keys 00 | resp keys 05
        try expectRoundTrip(.pairingResponse(SMPPairingFeatures(
            ioCapability: .noInputNoOutput, authenticationRequirements: [], maximumEncryptionKeySize: 8,
            initiatorKeyDistribution: [], responderKeyDistribution: [.encryptionKey, .signingKey])),
                            [0x02, 0x03, 0x00, 0x00, 0x08, 0x00, 0x05])
    }

    @Test func authReqBitsAndOOBFlag() throws {
        // AuthReq 0x2D = bonding | MITM | SC | CT2; OOB present; keyboard+display.
        let features = SMPPairingFeatures(ioCapability: .keyboardDisplay, oobDataPresent: true,
                                          authenticationRequirements: [.bonding, .mitm, .secureConnections, .ct2],
                                          initiatorKeyDistribution: [.identityKey], responderKeyDistribution: [.identityKey, .linkKey])
        try expectRoundTrip(.pairingRequest(features), [0x01, 0x04, 0x01, 0x2D, 0x10, 0x02, 0x0A])
        try expectRoundTrip(.securityRequest([.bonding, .mitm, .secureConnections]), [0x0B, 0x0D])
        try expectRoundTrip(.securityRequest([.keypress]), [0x0B, 0x10])
    }

    @Test func valuesAndKeys() throws {
        try expectRoundTrip(.pairingConfirm(confirmValue: value128), [0x03] + value128Wire)
        try expectRoundTrip(.pairingRandom(randomValue: value128), [0x04] + value128Wire)
        try expectRoundTrip(.encryptionInformation(longTermKey: value128), [0x06] + value128Wire)
        try expectRoundTrip(.identityInformation(identityResolvingKey: value128), [0x08] + value128Wire)
        try expectRoundTrip(.signingInformation(signatureKey: value128), [0x0A] + value128Wire)
        try expectRoundTrip(.pairingDHKeyCheck(dhKeyCheck: value128), [0x0D] + value128Wire)
        // EDIV 0x1234 then Rand 0x1122334455667788, both least significant first.
        try expectRoundTrip(.centralIdentification(ediv: 0x1234, rand: 0x1122_3344_5566_7788),
                            [0x07, 0x34, 0x12, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
    }

    @Test func identityAddress() throws {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:11:22"))
        // AddrType 0x01 (static random), then the address least significant octet first.
        try expectRoundTrip(.identityAddressInformation(DeviceAddress(address, type: .random)),
                            [0x09, 0x01, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0])
        try expectRoundTrip(.identityAddressInformation(DeviceAddress(address, type: .public)),
                            [0x09, 0x00, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0])
    }

    @Test func publicKeyAndKeypress() throws {
        let x = (0..<32).map { UInt8($0) }, y = (32..<64).map { UInt8($0) }
        let key = try #require(SMPPublicKey(x: x, y: y))
        try expectRoundTrip(.pairingPublicKey(key), [0x0C] + x + y)
        #expect(SMPPublicKey(x: x, y: Array(y.dropLast())) == nil)
        try expectRoundTrip(.keypressNotification(.passkeyDigitEntered), [0x0E, 0x01])
        try expectRoundTrip(.keypressNotification(.passkeyEntryCompleted), [0x0E, 0x04])
    }

    @Test func pairingFailedReasons() throws {
        try expectRoundTrip(.pairingFailed(.pairingNotSupported), [0x05, 0x05])
        try expectRoundTrip(.pairingFailed(SMPPairingFailureReason(rawValue: 0x42)), [0x05, 0x42])
        #expect(SMPPairingFailureReason.pairingNotSupported.description == "Pairing Not Supported (0x05)")
        #expect(SMPPairingFailureReason.dhKeyCheckFailed.name == "DHKey Check Failed")
        #expect(SMPPairingFailureReason.busy.rawValue == 0x10)
        #expect(SMPPairingFailureReason(rawValue: 0x42).name == "Reserved")
        #expect(SMPPDU.pairingFailed(.confirmValueFailed).description == "Pairing Failed: Confirm Value Failed (0x04)")
        #expect(SMPCode.keypressNotification.name == "Pairing Keypress Notification")
    }

    @Test func unknownCodesCarryTheCode() {
        #expect(throws: PacketDecodingError.unknownOpcode(context: "SMP PDU", opcode: 0x0F)) { try SMPPDU.decode([0x0F, 0x00]) }
        #expect(throws: PacketDecodingError.unknownOpcode(context: "SMP PDU", opcode: 0x00)) { try SMPPDU.decode([0x00]) }
        #expect(throws: PacketDecodingError.truncated(context: "SMP PDU", needed: 1, available: 0)) { try SMPPDU.decode([]) }
    }

    @Test func shortAndLongPDUs() {
        #expect(throws: PacketDecodingError.truncated(context: "SMP Pairing Request", needed: 1, available: 0)) {
            try SMPPDU.decode([0x01, 0x01, 0x00, 0x00, 0x10, 0x07])
        }
        #expect(throws: PacketDecodingError.truncated(context: "SMP Pairing Confirm", needed: 8, available: 7)) {
            try SMPPDU.decode([0x03] + Array(value128Wire.dropLast()))
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "SMP Pairing Failed", count: 1)) {
            try SMPPDU.decode([0x05, 0x05, 0x00])
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "SMP Pairing Random", count: 1)) {
            try SMPPDU.decode([0x04] + value128Wire + [0x00])
        }
    }

    @Test func reservedFieldValues() {
        #expect(throws: PacketDecodingError.invalidValue(context: "SMP Pairing Request", field: "IO capability", value: 5)) {
            try SMPPDU.decode([0x01, 0x05, 0x00, 0x00, 0x10, 0x07, 0x07])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "SMP Pairing Response", field: "OOB data flag", value: 2)) {
            try SMPPDU.decode([0x02, 0x03, 0x02, 0x00, 0x10, 0x00, 0x00])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "SMP Identity Address Information", field: "AddrType",
                                                         value: 2)) {
            try SMPPDU.decode([0x09, 0x02, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "SMP Pairing Keypress Notification",
                                                         field: "notification type", value: 5)) {
            try SMPPDU.decode([0x0E, 0x05])
        }
    }
}
