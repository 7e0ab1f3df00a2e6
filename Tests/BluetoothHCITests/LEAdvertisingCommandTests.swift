import BluetoothCore
import BluetoothHCI
import Testing

/// Legacy advertising (Core 6.0, Vol 4, Part E, 7.8.5–7.8.9).
@Suite(.timeLimit(.minutes(1))) struct LEAdvertisingCommandTests {
    @Test func leSetAdvertisingParameters() throws {
        // Interval 0x0800 (1.28 s) both, ADV_IND, own random, peer public 0, all channels
        // (0x07), accept all; length 2 + 2 + 1 + 1 + 1 + 6 + 1 + 1 = 15.
        try expectCommand(LESetAdvertisingParametersCommand(intervalMin: 0x0800, intervalMax: 0x0800, ownAddressType: .random),
                          "06 20 0f 00 08 00 08 00 01 00 00 00 00 00 00 00 07 00")
    }

    @Test func leSetAdvertisingParametersDirected() throws {
        // Low duty cycle directed (0x04) to random C0:FF:EE:00:11:22, channels 37 and 39 (0x05),
        // filter both (0x03).
        let command = LESetAdvertisingParametersCommand(
            intervalMin: 0x0020, intervalMax: 0x0030, advertisingType: .advDirectIndLow, ownAddressType: .public,
            peerAddressType: .random, peerAddress: address("C0:FF:EE:00:11:22"), channelMap: [.channel37, .channel39],
            filterPolicy: .filterBoth)
        try expectCommand(command, "06 20 0f 20 00 30 00 04 00 01 22 11 00 ee ff c0 05 03")
    }

    @Test func advertisingParametersRejectInvalidValues() {
        expectInvalidValue(field: "Advertising_Type", value: 5) {
            _ = try LESetAdvertisingParametersCommand.decode(parameters: bytes("00 08 00 08 05 00 00 00 00 00 00 00 00 07 00"))
        }
        // Peer_Address_Type allows only public and random here.
        expectInvalidValue(field: "Peer_Address_Type", value: 2) {
            _ = try LESetAdvertisingParametersCommand.decode(parameters: bytes("00 08 00 08 00 00 02 00 00 00 00 00 00 07 00"))
        }
        expectInvalidValue(field: "Advertising_Filter_Policy", value: 4) {
            _ = try LESetAdvertisingParametersCommand.decode(parameters: bytes("00 08 00 08 00 00 00 00 00 00 00 00 00 07 04"))
        }
    }

    @Test func leReadAdvertisingPhysicalChannelTxPower() throws {
        try expectCommand(LEReadAdvertisingPhysicalChannelTxPowerCommand(), "07 20 00")
        // -4 dBm = 0xFC.
        try expectReturn(LEReadAdvertisingPhysicalChannelTxPowerCommand.self, .init(txPowerLevel: -4), "0e 05 01 07 20 00 fc")
    }

    @Test func leSetAdvertisingData() throws {
        // Flags (02 01 06) and a 16-bit UUID list (03 03 0D 18): 7 octets, then 24 zero octets
        // of padding; the parameter is always 32 octets (0x20).
        let data = bytes("02 01 06 03 03 0d 18")
        try expectCommand(LESetAdvertisingDataCommand(data: data),
                          "08 20 20 07 02 01 06 03 03 0d 18" + String(repeating: " 00", count: 24))
    }

    @Test func leSetScanResponseData() throws {
        // Complete Local Name "Bluejay": 08 09 42 6C 75 65 6A 61 79 (9 octets) + 22 zeros.
        let data = bytes("08 09 42 6c 75 65 6a 61 79")
        try expectCommand(LESetScanResponseDataCommand(data: data),
                          "09 20 20 09 08 09 42 6c 75 65 6a 61 79" + String(repeating: " 00", count: 22))
    }

    @Test func emptyAndFullAdvertisingData() throws {
        try expectCommand(LESetAdvertisingDataCommand(data: []), "08 20 20 00" + String(repeating: " 00", count: 31))
        let full = [UInt8](repeating: 0xAB, count: 31)
        try expectCommand(LESetAdvertisingDataCommand(data: full), "08 20 20 1f" + String(repeating: " ab", count: 31))
    }

    @Test func advertisingDataLongerThan31IsRejected() {
        // Length octet 32: more than the 31-octet field can hold.
        expectInvalidValue(field: "Advertising_Data_Length", value: 32) {
            _ = try LESetAdvertisingDataCommand.decode(parameters: [32] + [UInt8](repeating: 0, count: 31))
        }
        expectInvalidValue(field: "Scan_Response_Data_Length", value: 0xFF) {
            _ = try LESetScanResponseDataCommand.decode(parameters: [0xFF] + [UInt8](repeating: 0, count: 31))
        }
        // The encoder never writes more than the 32-octet parameter.
        let oversized = LESetAdvertisingDataCommand(data: [UInt8](repeating: 1, count: 40))
        #expect(oversized.encode().count == 3 + 32)
    }

    @Test func advertisingDataParameterMustBe32Octets() {
        // A parameter that stops after the significant octets is truncated.
        #expect(throws: PacketDecodingError.self) {
            _ = try LESetAdvertisingDataCommand.decode(parameters: bytes("03 02 01 06"))
        }
    }

    @Test func leSetAdvertisingEnable() throws {
        try expectCommand(LESetAdvertisingEnableCommand(enable: true), "0a 20 01 01")
        try expectCommand(LESetAdvertisingEnableCommand(enable: false), "0a 20 01 00")
        expectInvalidValue(field: "Advertising_Enable", value: 2) {
            _ = try LESetAdvertisingEnableCommand.decode(parameters: [2])
        }
    }
}
