import BluetoothCore
import BluetoothHCI
import Testing

/// Zephyr's vendor commands (include/zephyr/bluetooth/hci_vs.h) and LE Read Filter Accept List
/// Size (Core 6.0, Vol 4, Part E, 7.8.14), byte vectors written out by hand.
@Suite(.timeLimit(.minutes(1))) struct ZephyrVendorCommandTests {
    @Test func readVersionInformation() throws {
        try expectCommand(ZephyrReadVersionInformationCommand(), "01 fc 00")
        // Nordic (0x0002), nRF52x (0x0002), standard controller (0x01), version 3, revision
        // 0x0102, build 0x04030201: 12 octets after the status.
        try expectReturn(ZephyrReadVersionInformationCommand.self,
                         .init(hardwarePlatform: 2, hardwareVariant: 2, firmwareVariant: 1, firmwareVersion: 3,
                               firmwareRevision: 0x0102, firmwareBuild: 0x0403_0201),
                         "0e 10 01 01 fc 00 02 00 02 00 01 03 02 01 01 02 03 04")
    }

    @Test func readSupportedCommands() throws {
        try expectCommand(ZephyrReadSupportedCommandsCommand(), "02 fc 00")
        let parameters = ZephyrReadSupportedCommandsCommand.ReturnParameters(bits: [0, 1, 8])
        #expect(parameters.octets.prefix(3) == [0x03, 0x01, 0x00] && parameters.octets.count == 64)
        #expect(parameters.supportsReadStaticAddresses)
        #expect(!ZephyrReadSupportedCommandsCommand.ReturnParameters(bits: [0, 1]).supportsReadStaticAddresses)
        try expectReturn(ZephyrReadSupportedCommandsCommand.self, parameters,
                         "0e 44 01 02 fc 00 03 01" + String(repeating: " 00", count: 62))
    }

    @Test func readStaticAddresses() throws {
        try expectCommand(ZephyrReadStaticAddressesCommand(), "09 fc 00")
        // Num_Addresses 1, the address least significant octet first, a 16-octet IR.
        let address = try #require(BluetoothAddress("C4:5A:7E:11:22:33"))
        try expectReturn(ZephyrReadStaticAddressesCommand.self,
                         .init(addresses: [.init(address: address, identityRoot: Array(0x10...0x1F))]),
                         "0e 1b 01 09 fc 00 01 33 22 11 7e 5a c4 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f")
        // No address at all.
        try expectReturn(ZephyrReadStaticAddressesCommand.self, .init(addresses: []), "0e 05 01 09 fc 00 00")
    }

    @Test func aTruncatedStaticAddressListIsRefused() {
        // Two announced, one there: a typed decoding error, never a crash.
        #expect(throws: PacketDecodingError.self) {
            _ = try ZephyrReadStaticAddressesCommand.ReturnParameters.decode(
                returnParameters: bytes("02 33 22 11 7e 5a c4" + String(repeating: " 00", count: 16)), context: "test")
        }
    }

    @Test func readFilterAcceptListSize() throws {
        try expectCommand(LEReadFilterAcceptListSizeCommand(), "0f 20 00")
        try expectReturn(LEReadFilterAcceptListSizeCommand.self, .init(filterAcceptListSize: 1), "0e 05 01 0f 20 00 01")
    }

    @Test func staticRandomAddresses() {
        #expect(BluetoothAddress("C4:5A:7E:11:22:33")?.isStaticRandom == true)
        #expect(BluetoothAddress("C0:00:00:00:00:00")?.isStaticRandom == false, "the random part all zeros")
        #expect(BluetoothAddress("FF:FF:FF:FF:FF:FF")?.isStaticRandom == false, "the random part all ones")
        #expect(BluetoothAddress("44:5A:7E:11:22:33")?.isStaticRandom == false, "a resolvable private address")
        var generator = SeededRandomNumberGenerator(seed: 7)
        for _ in 0..<1000 { #expect(BluetoothAddress.randomStatic(using: &generator).isStaticRandom) }
    }
}
