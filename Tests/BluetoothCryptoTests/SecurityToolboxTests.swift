import BluetoothCore
@testable import BluetoothCrypto
import Testing

/// The functions of Core 6.0, Vol 3, Part H, 2.2 against the spec's sample data (Appendix D
/// and the samples in 2.2.3/2.2.4), RFC 4493 and FIPS-197.
@Suite("Security toolbox", .timeLimit(.minutes(1)))
struct SecurityToolboxTests {
    /// FIPS-197, Appendix C.1 and Appendix B: e is plain AES-128, most significant octet first.
    @Test func eIsAES128() {
        #expect(SecurityToolbox.e(key: number("000102030405060708090a0b0c0d0e0f"), plaintext: number("00112233445566778899aabbccddeeff"))
            == number("69c4e0d86a7b0430d8cdb78070b4c55a"))
        #expect(SecurityToolbox.e(key: number("2b7e151628aed2a6abf7158809cf4f3c"), plaintext: number("3243f6a8885a308d313198a2e0370734"))
            == number("3925841d02dc09fbdc118597196a0b32"))
    }

    /// RFC 4493, 4 (Examples 1 to 4), repeated as Core 6.0, Vol 3, Part H, Appendix D.1.
    @Test(arguments: [
        (0, "bb1d6929e95937287fa37d129b756746"),
        (16, "070a16b46b4d4144f79bdd9dd04a287c"),
        (40, "dfa66747de9ae63030ca32611497c827"),
        (64, "51f0bebf7e3b9d92fc49741779363cfe"),
    ])
    func aesCMACMeetsRFC4493(length: Int, mac: String) {
        let message = octets(
            "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710"
        )
        #expect(SecurityToolbox.aesCMAC(key: number("2b7e151628aed2a6abf7158809cf4f3c"), message: Array(message.prefix(length))) == number(mac))
    }

    /// Core 6.0, Vol 3, Part H, 2.2.3: the c1 example, with the Pairing Request and Response as
    /// sent on the wire (code first).
    @Test func c1MeetsTheSpecExample() {
        let confirm = SecurityToolbox.c1(
            k: 0, r: number("5783D52156AD6F0E6388274EC6702EE0"),
            pairingRequest: [0x01, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07],
            pairingResponse: [0x02, 0x03, 0x00, 0x00, 0x08, 0x00, 0x05],
            initiatorAddressType: 1, initiatorAddress: 0xA1A2_A3A4_A5A6,
            responderAddressType: 0, responderAddress: 0xB1B2_B3B4_B5B6)
        #expect(confirm == number("1e1e3fef878988ead2a74dc5bef13b86"))
    }

    @Test func c1DependsOnEveryInput() {
        func confirm(preq: UInt8 = 0x01, initiatorType: UInt8 = 1, responder: UInt64 = 0xB1B2_B3B4_B5B6) -> UInt128 {
            SecurityToolbox.c1(
                k: 0, r: number("5783D52156AD6F0E6388274EC6702EE0"),
                pairingRequest: [preq, 0x01, 0x00, 0x00, 0x10, 0x07, 0x07],
                pairingResponse: [0x02, 0x03, 0x00, 0x00, 0x08, 0x00, 0x05],
                initiatorAddressType: initiatorType, initiatorAddress: 0xA1A2_A3A4_A5A6,
                responderAddressType: 0, responderAddress: responder)
        }
        let reference = confirm()
        #expect(confirm(preq: 0x02) != reference)
        #expect(confirm(initiatorType: 0) != reference)
        #expect(confirm(responder: 0xB1B2_B3B4_B5B7) != reference)
    }

    /// A Pairing Request of the wrong length gives a value (that will not match), not a crash.
    @Test func c1WithAShortPDUDoesNotCrash() {
        let confirm = SecurityToolbox.c1(
            k: 0, r: 0, pairingRequest: [0x01], pairingResponse: [],
            initiatorAddressType: 0, initiatorAddress: 0, responderAddressType: 0, responderAddress: 0)
        #expect(confirm == SecurityToolbox.c1(
            k: 0, r: 0, pairingRequest: [0x01, 0, 0, 0, 0, 0, 0], pairingResponse: [0, 0, 0, 0, 0, 0, 0],
            initiatorAddressType: 0, initiatorAddress: 0, responderAddressType: 0, responderAddress: 0))
    }

    /// Core 6.0, Vol 3, Part H, 2.2.4: the s1 example.
    @Test func s1MeetsTheSpecExample() {
        let stk = SecurityToolbox.s1(k: 0, r1: number("000F0E0D0C0B0A091122334455667788"), r2: number("010203040506070899AABBCCDDEEFF00"))
        #expect(stk == number("9a1fe1f0e8b0f49b5b4216ae796da062"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.7: ah.
    @Test func ahMeetsAppendixD7() {
        #expect(SecurityToolbox.ah(k: SampleData.key, r: 0x70_8194) == 0x0D_FBAA)
        // Only the low 24 bits of r count.
        #expect(SecurityToolbox.ah(k: SampleData.key, r: 0xFF70_8194) == 0x0D_FBAA)
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.2: f4.
    @Test func f4MeetsAppendixD2() {
        #expect(SecurityToolbox.f4(u: SampleData.u, v: SampleData.v, x: SampleData.n1, z: 0) == number("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.3: f5.
    @Test func f5MeetsAppendixD3() {
        let keys = SecurityToolbox.f5(w: SampleData.dhKey, n1: SampleData.n1, n2: SampleData.n2, a1: SampleData.a1, a2: SampleData.a2)
        #expect(keys.macKey == SampleData.macKey)
        #expect(keys.ltk == number("69867911 69d7cd23 980522b5 94750a38"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.4: f6.
    @Test func f6MeetsAppendixD4() {
        let check = SecurityToolbox.f6(
            w: SampleData.macKey, n1: SampleData.n1, n2: SampleData.n2, r: number("12a3343b b453bb54 08da42d2 0c2d0fc8"),
            ioCap: 0x01_0102, a1: SampleData.a1, a2: SampleData.a2)
        #expect(check == number("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.5: g2, the whole 32-bit value.
    @Test func g2MeetsAppendixD5() {
        let value = SecurityToolbox.g2(u: SampleData.u, v: SampleData.v, x: SampleData.n1, y: SampleData.n2)
        #expect(value == 0x2F9E_D5BA)
        #expect(value % 1_000_000 == 938_554)  // 0x2f9ed5ba = 798,938,554
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.6: h6 with key ID "lebr".
    @Test func h6MeetsAppendixD6() {
        #expect(SecurityToolbox.h6(w: SampleData.key, keyID: SecurityToolbox.keyIDLebr) == number("2d9ae102 e76dc91c e8d3a9e2 80b16399"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.8: h7 with SALT "tmp1".
    @Test func h7MeetsAppendixD8() {
        #expect(SecurityToolbox.h7(salt: UInt128(SecurityToolbox.keyIDTmp1), w: SampleData.key) == number("fb173597 c6a3c0ec d2998c2a 75a57011"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.9: LTK to link key with CT2 = 1,
    /// h6(h7("tmp1", LTK), "lebr").
    @Test func ltkToLinkKeyWithH7MeetsAppendixD9() {
        let ltk = number("368df9bc e3264b58 bd066c33 334fbf64")
        let ilk = SecurityToolbox.h7(salt: UInt128(SecurityToolbox.keyIDTmp1), w: ltk)
        #expect(SecurityToolbox.h6(w: ilk, keyID: SecurityToolbox.keyIDLebr) == number("287ad379 dca40253 0a39f1f4 3047b835"))
    }

    /// Core 6.0, Vol 3, Part H, Appendix D.10: LTK to link key with CT2 = 0,
    /// h6(h6(LTK, "tmp1"), "lebr"): h6 with key ID "tmp1".
    @Test func ltkToLinkKeyWithH6MeetsAppendixD10() {
        let ltk = number("368df9bc e3264b58 bd066c33 334fbf64")
        let ilk = SecurityToolbox.h6(w: ltk, keyID: SecurityToolbox.keyIDTmp1)
        #expect(SecurityToolbox.h6(w: ilk, keyID: SecurityToolbox.keyIDLebr) == number("bc1ca4ef 633fc1bd 0d8230af ee388fb0"))
    }

    /// A coordinate of the wrong length gives a value that does not match, not a crash.
    @Test func f4AndG2WithWrongLengthsDoNotCrash() {
        let right = SecurityToolbox.f4(u: SampleData.u, v: SampleData.v, x: SampleData.n1, z: 0)
        #expect(SecurityToolbox.f4(u: Array(SampleData.u.dropFirst()), v: SampleData.v, x: SampleData.n1, z: 0) != right)
        #expect(SecurityToolbox.f4(u: [], v: SampleData.v + [0], x: SampleData.n1, z: 0) != right)
        #expect(SecurityToolbox.g2(u: [], v: [], x: 0, y: 0) != SecurityToolbox.g2(u: SampleData.u, v: SampleData.v, x: 0, y: 0))
        #expect(SecurityToolbox.f5(w: [1], n1: 0, n2: 0, a1: 0, a2: 0).ltk != SecurityToolbox.f5(w: SampleData.dhKey, n1: 0, n2: 0, a1: 0, a2: 0).ltk)
    }
}

@Suite("Constant-time comparison")
struct ConstantTimeComparisonTests {
    /// Equal values compare equal; a difference in any one bit, anywhere, is seen (the fold
    /// of the two halves must not lose the high half).
    @Test func everyBitCounts() {
        let value: UInt128 = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210
        #expect(SecurityToolbox.constantTimeEqual(value, value))
        for bit in 0..<128 {
            #expect(!SecurityToolbox.constantTimeEqual(value, value ^ (UInt128(1) << bit)), "bit \(bit)")
        }
        let word: UInt64 = 0xDEAD_BEEF_0BAD_F00D
        #expect(SecurityToolbox.constantTimeEqual(word, word))
        for bit in 0..<64 { #expect(!SecurityToolbox.constantTimeEqual(word, word ^ (1 << UInt64(bit)))) }
        let bytes: [UInt8] = Array(0..<32)
        #expect(SecurityToolbox.constantTimeEqual(bytes, bytes))
        #expect(!SecurityToolbox.constantTimeEqual(bytes, Array(bytes.dropLast())))
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x80
            #expect(!SecurityToolbox.constantTimeEqual(bytes, changed), "octet \(index)")
        }
    }
}
