import BluetoothCore
import BluetoothHCI
import BluetoothVirtual
import Testing

/// LE Encrypt on the virtual controller: AES-128 from BluetoothCrypto (whose own tests hold
/// the FIPS-197 and Core vectors), here the command's byte order.
@Suite("LE Encrypt", .timeLimit(.minutes(1)))
struct LEEncryptTests {
    /// LE Encrypt carries key and plaintext least significant octet first (Core 6.0, Vol 4,
    /// Part E, 7.8.22), so the FIPS-197 vectors (C.1, then B) go in reversed and come out reversed.
    @Test(arguments: [
        ("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"),
        ("2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734", "3925841d02dc09fbdc118597196a0b32"),
    ])
    func leEncryptCommandUsesHCIByteOrder(key: String, plaintext: String, ciphertext: String) async throws {
        let link = VirtualLink()
        let host = HCITestHost(link.addController(address: TestAddresses.central))
        let key = try #require(Hex.decode(key))
        let plaintext = try #require(Hex.decode(plaintext))
        let result = try await host.run(LEEncryptCommand(key: key.reversed(), plaintext: plaintext.reversed()))
        #expect(Hex.encode(result.encryptedData.reversed()) == ciphertext)
    }
}
