import BluetoothCore
import BluetoothHost
import Testing

/// A server that needs encryption also checks the key's size (Core 6.0, Vol 3, Part A, 4.23,
/// result 0x0007), on links the two hosts encrypted by pairing.
@Suite("Host: L2CAP servers check the encryption key size", .timeLimit(.minutes(1)))
struct L2CAPChannelKeySizeTests {
    @Test func aLinkWithAShortKeyIsRefusedWithEncryptionKeySizeTooShort() async throws {
        // The central pairs with at most a 7-octet key.
        let pair = try await HostPair.make(central: .init(maximumKeySize: 7))
        _ = try await pair.peripheral.listen(psm: 0x0080, security: .encrypted, minimumKeySize: 16) { _ in }
        _ = try await pair.peripheral.listen(psm: 0x0081, security: .encrypted, minimumKeySize: 7) { _ in }
        let (connection, _) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && security.keySize == 7)

        await #expect(throws: L2CAPChannelError.refused(.encryptionKeySizeTooShort)) {
            try await pair.central.openChannel(psm: 0x0080, on: connection)
        }
        await #expect(throws: L2CAPChannelError.refused(.encryptionKeySizeTooShort)) {
            try await pair.central.openEnhancedChannels(psm: 0x0080, count: 2, on: connection, parameters: .init(mtu: 64, mps: 64))
        }
        // A server content with 7 octets accepts the same link.
        let channel = try await pair.central.openChannel(psm: 0x0081, on: connection)
        #expect(channel.isOpen)
    }

    @Test func aKeySizeOutsideSevenToSixteenIsAnInvalidArgument() async throws {
        let pair = try await HostPair.make()
        await #expect(throws: L2CAPChannelError.invalidArgument("an encryption key has 7…16 octets, not 17")) {
            try await pair.peripheral.listen(psm: 0x0080, security: .encrypted, minimumKeySize: 17) { _ in }
        }
    }
}
