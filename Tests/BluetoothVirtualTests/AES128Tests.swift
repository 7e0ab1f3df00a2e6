import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("AES-128", .timeLimit(.minutes(1)))
struct AES128Tests {
    /// FIPS-197, Appendix C.1.
    @Test func fips197Vector() throws {
        let key = try #require(Hex.decode("000102030405060708090a0b0c0d0e0f"))
        let plaintext = try #require(Hex.decode("00112233445566778899aabbccddeeff"))
        let ciphertext = try #require(AES128.encrypt(block: plaintext, key: key))
        #expect(Hex.encode(ciphertext) == "69c4e0d86a7b0430d8cdb78070b4c55a")
    }

    /// FIPS-197, Appendix B (the worked example).
    @Test func fips197AppendixB() throws {
        let key = try #require(Hex.decode("2b7e151628aed2a6abf7158809cf4f3c"))
        let plaintext = try #require(Hex.decode("3243f6a8885a308d313198a2e0370734"))
        #expect(AES128.encrypt(block: plaintext, key: key).map { Hex.encode($0) } == "3925841d02dc09fbdc118597196a0b32")
    }

    @Test func wrongSizesAreRefused() {
        #expect(AES128.encrypt(block: [0, 1], key: [UInt8](repeating: 0, count: 16)) == nil)
        #expect(AES128.encrypt(block: [UInt8](repeating: 0, count: 16), key: []) == nil)
    }

    /// LE Encrypt carries key and plaintext least significant octet first (Core 6.0, Vol 4,
    /// Part E, 7.8.22), so the FIPS-197 vector goes in reversed and comes out reversed.
    @Test func leEncryptCommandUsesHCIByteOrder() async throws {
        let link = VirtualLink()
        let host = HCITestHost(link.addController(address: TestAddresses.central))
        let key = try #require(Hex.decode("000102030405060708090a0b0c0d0e0f"))
        let plaintext = try #require(Hex.decode("00112233445566778899aabbccddeeff"))
        let result = try await host.run(LEEncryptCommand(key: key.reversed(), plaintext: plaintext.reversed()))
        #expect(Hex.encode(result.encryptedData.reversed()) == "69c4e0d86a7b0430d8cdb78070b4c55a")
    }
}
