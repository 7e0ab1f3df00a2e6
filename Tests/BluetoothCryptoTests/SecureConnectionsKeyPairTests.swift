import BluetoothCrypto
import Testing

@Suite("Secure Connections key pair", .timeLimit(.minutes(1)))
struct SecureConnectionsKeyPairTests {
    /// Core 6.0, Vol 3, Part H, 2.3.5.6.1 and Appendix D: the sample private keys give the
    /// sample public keys (A is the debug key).
    @Test func sampleKeysGiveTheSamplePublicKeys() throws {
        #expect(SecureConnectionsKeyPair.debugPrivateKey == SampleData.privateA)
        let a = try SecureConnectionsKeyPair(privateKey: SampleData.privateA)
        #expect(a.publicKeyX == SampleData.publicAX)
        #expect(a.publicKeyY == SampleData.publicAY)
        let b = try SecureConnectionsKeyPair(privateKey: SampleData.privateB)
        #expect(b.publicKeyX == SampleData.publicBX)
        #expect(b.publicKeyY == SampleData.publicBY)
    }

    /// Both sides of the sample exchange compute the sample DHKey.
    @Test func sampleKeysAgreeOnTheSampleDHKey() throws {
        let a = try SecureConnectionsKeyPair(privateKey: SampleData.privateA)
        let b = try SecureConnectionsKeyPair(privateKey: SampleData.privateB)
        #expect(try a.dhKey(peerX: SampleData.publicBX, peerY: SampleData.publicBY) == SampleData.dhKey)
        #expect(try b.dhKey(peerX: SampleData.publicAX, peerY: SampleData.publicAY) == SampleData.dhKey)
    }

    @Test func freshKeysAgreeAndDiffer() throws {
        let a = SecureConnectionsKeyPair()
        let b = SecureConnectionsKeyPair()
        #expect(a.publicKeyX != b.publicKeyX)
        #expect(a.publicKeyX.count == 32 && a.publicKeyY.count == 32)
        let shared = try a.dhKey(peerX: b.publicKeyX, peerY: b.publicKeyY)
        #expect(shared.count == 32)
        #expect(try b.dhKey(peerX: a.publicKeyX, peerY: a.publicKeyY) == shared)
    }

    /// The invalid-curve attack (Core 6.0, Vol 3, Part H, 2.3.5.6.1): a point off the curve,
    /// or with a coordinate not below the prime, is refused.
    @Test func aPublicKeyNotOnTheCurveIsRefused() throws {
        let a = SecureConnectionsKeyPair()
        var y = SampleData.publicBY
        y[31] ^= 0x01
        #expect(throws: SecurityCryptoError.invalidPublicKey) { try a.dhKey(peerX: SampleData.publicBX, peerY: y) }
        let zeros = [UInt8](repeating: 0, count: 32)
        #expect(throws: SecurityCryptoError.invalidPublicKey) { try a.dhKey(peerX: zeros, peerY: zeros) }
        let ones = [UInt8](repeating: 0xFF, count: 32)
        #expect(throws: SecurityCryptoError.invalidPublicKey) { try a.dhKey(peerX: ones, peerY: SampleData.publicBY) }
    }

    /// A peer that sends back our own public key is refused.
    @Test func thePeersKeyEqualToOursIsRefused() throws {
        let a = try SecureConnectionsKeyPair(privateKey: SampleData.privateA)
        #expect(throws: SecurityCryptoError.publicKeyEqualsOwn) { try a.dhKey(peerX: a.publicKeyX, peerY: a.publicKeyY) }
        let fresh = SecureConnectionsKeyPair()
        #expect(throws: SecurityCryptoError.publicKeyEqualsOwn) { try fresh.dhKey(peerX: fresh.publicKeyX, peerY: fresh.publicKeyY) }
    }

    @Test func wrongLengthsGiveTypedErrors() throws {
        #expect(throws: SecurityCryptoError.invalidLength("private key: 31 octets, expected 32")) {
            try SecureConnectionsKeyPair(privateKey: Array(SampleData.privateA.dropFirst()))
        }
        #expect(throws: SecurityCryptoError.invalidLength("private key: 0 octets, expected 32")) { try SecureConnectionsKeyPair(privateKey: []) }
        let a = SecureConnectionsKeyPair()
        #expect(throws: SecurityCryptoError.invalidLength("peer public key x: 33 octets, expected 32")) {
            try a.dhKey(peerX: SampleData.publicBX + [0], peerY: SampleData.publicBY)
        }
        #expect(throws: SecurityCryptoError.invalidLength("peer public key y: 0 octets, expected 32")) {
            try a.dhKey(peerX: SampleData.publicBX, peerY: [])
        }
    }

    /// Zero and values not below the group order are not private keys.
    @Test func anInvalidScalarIsRefused() {
        #expect(throws: SecurityCryptoError.invalidPrivateKey) { try SecureConnectionsKeyPair(privateKey: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: SecurityCryptoError.invalidPrivateKey) { try SecureConnectionsKeyPair(privateKey: [UInt8](repeating: 0xFF, count: 32)) }
    }
}
