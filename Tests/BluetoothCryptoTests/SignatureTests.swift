import BluetoothCore
@testable import BluetoothCrypto
import Testing

/// Data signing (Core 6.0, Vol 3, Part H, 2.4.5). The spec has no sample data for it, so the
/// vectors are BlueZ's (unit/test-crypto.c, `sign_att_1`, `sign_att_2` and `sign_att_5`;
/// its signer passes the qualification tests SM/MAS/SIGN/BV-03-C and BI-01-C), which this
/// project recomputed with Bumble's AES-CMAC. Their keys and signatures are listed there
/// least significant octet first; here the keys are numbers.
@Suite("Data signing", .timeLimit(.minutes(1)))
struct SignatureTests {
    /// `sign_att_5`: an ATT_SIGNED_WRITE_CMD to handle 0x0012 of value 13 37, SignCounter 1;
    /// the signature on the wire is 01 00 00 00 f1 87 1e 93 3c 90 0f f2.
    @Test func signedWriteVector() {
        let key = number("611b64ebfbcd1fd372ec9196df425e50")
        let mac = SecurityToolbox.signatureMAC(key: key, pdu: [0xD2, 0x12, 0x00, 0x13, 0x37], signCounter: 1)
        #expect(mac == 0xF20F_903C_931E_87F1)
        // Any change of PDU, counter or key changes the MAC.
        #expect(SecurityToolbox.signatureMAC(key: key, pdu: [0xD2, 0x12, 0x00, 0x13, 0x38], signCounter: 1) != mac)
        #expect(SecurityToolbox.signatureMAC(key: key, pdu: [0xD2, 0x12, 0x00, 0x13, 0x37], signCounter: 2) != mac)
        #expect(SecurityToolbox.signatureMAC(key: key ^ 1, pdu: [0xD2, 0x12, 0x00, 0x13, 0x37], signCounter: 1) != mac)
    }

    /// `sign_att_1` and `sign_att_2`: the RFC 4493 key, SignCounter 0, an empty message and
    /// the first RFC 4493 block as it would travel.
    @Test(arguments: [
        ("", UInt64(0xC0C2_EB27_4159_A8B3)),
        ("6bc1bee22e409f96e93d7e117393172a", UInt64(0x2A23_2A39_F474_3927)),
    ])
    func rfc4493KeyVectors(message: String, mac: UInt64) throws {
        let pdu = try #require(Hex.decode(message))
        #expect(SecurityToolbox.signatureMAC(key: number("2b7e151628aed2a6abf7158809cf4f3c"), pdu: pdu, signCounter: 0) == mac)
    }
}
