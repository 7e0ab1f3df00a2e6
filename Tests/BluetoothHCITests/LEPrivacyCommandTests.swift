import BluetoothCore
import BluetoothHCI
import Testing

/// Resolving list commands (Core 6.0, Vol 4, Part E, 7.8.38-7.8.41, 7.8.44, 7.8.45, 7.8.77).
@Suite(.timeLimit(.minutes(1))) struct LEPrivacyCommandTests {
    let address = BluetoothAddress("C0:11:22:33:44:55") ?? .zero
    let localIRK: [UInt8] = Array(16...31)

    @Test func addDeviceToResolvingList() throws {
        // Type, address (LSB first), peer IRK, local IRK: length 39.
        try expectCommand(LEAddDeviceToResolvingListCommand(peerIdentityAddressType: .random, peerIdentityAddress: address,
                                                            peerIRK: sequentialKey, localIRK: localIRK),
                          "27 20 27 01 55 44 33 22 11 c0 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"
                          + " 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f")
        #expect(LEAddDeviceToResolvingListCommand(peerIdentityAddressType: .public, peerIdentityAddress: address, peerIRK: [], localIRK: [])
            .peerIdentity == DeviceAddress(address, type: .public))
    }

    @Test func identityAddressTypeIsPublicOrRandomOnly() {
        // 0x02 (a resolved identity) is not an identity address type here.
        expectInvalidValue(field: "Peer_Identity_Address_Type", value: 2) {
            _ = try LERemoveDeviceFromResolvingListCommand.decode(parameters: bytes("02 55 44 33 22 11 c0"))
        }
    }

    @Test func removeDeviceFromResolvingList() throws {
        try expectCommand(LERemoveDeviceFromResolvingListCommand(peerIdentityAddressType: .public, peerIdentityAddress: address),
                          "28 20 07 00 55 44 33 22 11 c0")
    }

    @Test func clearAndReadSize() throws {
        try expectCommand(LEClearResolvingListCommand(), "29 20 00")
        try expectCommand(LEReadResolvingListSizeCommand(), "2a 20 00")
        try expectReturn(LEReadResolvingListSizeCommand.self, .init(resolvingListSize: 8), "0e 05 01 2a 20 00 08")
    }

    @Test func setAddressResolutionEnable() throws {
        try expectCommand(LESetAddressResolutionEnableCommand(enable: true), "2d 20 01 01")
        try expectCommand(LESetAddressResolutionEnableCommand(enable: false), "2d 20 01 00")
        expectInvalidValue(field: "Address_Resolution_Enable", value: 2) {
            _ = try LESetAddressResolutionEnableCommand.decode(parameters: [2])
        }
    }

    @Test func setResolvablePrivateAddressTimeout() throws {
        // 900 s (0x0384), least significant octet first.
        try expectCommand(LESetResolvablePrivateAddressTimeoutCommand(timeout: 900), "2e 20 02 84 03")
        #expect(LESetResolvablePrivateAddressTimeoutCommand.timeoutRange == 1...3600)
    }

    @Test func setPrivacyMode() throws {
        try expectCommand(LESetPrivacyModeCommand(peerIdentityAddressType: .random, peerIdentityAddress: address, privacyMode: .device),
                          "4e 20 08 01 55 44 33 22 11 c0 01")
        try expectCommand(LESetPrivacyModeCommand(peerIdentityAddressType: .public, peerIdentityAddress: address, privacyMode: .network),
                          "4e 20 08 00 55 44 33 22 11 c0 00")
        expectInvalidValue(field: "Privacy_Mode", value: 2) {
            _ = try LESetPrivacyModeCommand.decode(parameters: bytes("00 55 44 33 22 11 c0 02"))
        }
        expectInvalidValue(field: "Peer_Identity_Address_Type", value: 3) {
            _ = try LESetPrivacyModeCommand.decode(parameters: bytes("03 55 44 33 22 11 c0 01"))
        }
    }
}
