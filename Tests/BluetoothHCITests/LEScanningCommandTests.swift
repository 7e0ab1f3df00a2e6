import BluetoothCore
import BluetoothHCI
import Testing

/// Legacy and extended scanning (Core 6.0, Vol 4, Part E, 7.8.10, 7.8.11, 7.8.64, 7.8.65).
@Suite(.timeLimit(.minutes(1))) struct LEScanningCommandTests {
    @Test func leSetScanParameters() throws {
        // Active (0x01), interval and window 0x0010 (10 ms), own public, basic unfiltered; length 7.
        try expectCommand(LESetScanParametersCommand(scanType: .active, scanInterval: 0x0010, scanWindow: 0x0010),
                          "0b 20 07 01 10 00 10 00 00 00")
        try expectCommand(LESetScanParametersCommand(scanType: .passive, scanInterval: 0x0060, scanWindow: 0x0030,
                                                     ownAddressType: .resolvableOrRandom, filterPolicy: .extendedFiltered),
                          "0b 20 07 00 60 00 30 00 03 03")
    }

    @Test func leSetScanEnable() throws {
        try expectCommand(LESetScanEnableCommand(enable: true, filterDuplicates: true), "0c 20 02 01 01")
        try expectCommand(LESetScanEnableCommand(enable: false, filterDuplicates: false), "0c 20 02 00 00")
    }

    @Test func leSetExtendedScanParametersOnBothPHYs() throws {
        // Own random, basic unfiltered, Scanning_PHYs = 1M | Coded = 0x05, then the 1M set
        // (active, 0x0060, 0x0030) and the Coded set (passive, 0x0120, 0x0090); length 3 + 2 × 5.
        let command = LESetExtendedScanParametersCommand(
            ownAddressType: .random, filterPolicy: .basicUnfiltered,
            le1M: .init(scanType: .active, scanInterval: 0x0060, scanWindow: 0x0030),
            leCoded: .init(scanType: .passive, scanInterval: 0x0120, scanWindow: 0x0090))
        #expect(command.scanningPHYs == [.le1M, .leCoded])
        try expectCommand(command, "41 20 0d 01 00 05 01 60 00 30 00 00 20 01 90 00")
    }

    @Test func leSetExtendedScanParametersOn1MOnly() throws {
        let command = LESetExtendedScanParametersCommand(le1M: .init(scanType: .active, scanInterval: 0x0060, scanWindow: 0x0030))
        try expectCommand(command, "41 20 08 00 00 01 01 60 00 30 00")
    }

    @Test func leSetExtendedScanEnable() throws {
        // Filter duplicates reset each period (0x02), duration 500 × 10 ms (0x01F4), period 1 × 1.28 s.
        try expectCommand(LESetExtendedScanEnableCommand(enable: true, filterDuplicates: .resetEachPeriod, duration: 500, period: 1),
                          "42 20 06 01 02 f4 01 01 00")
        try expectCommand(LESetExtendedScanEnableCommand(enable: false), "42 20 06 00 00 00 00 00 00")
    }

    @Test func scanningPHYsMustBe1MOrCoded() {
        // Bit 1 (LE 2M) is reserved for scanning.
        expectInvalidValue(field: "Scanning_PHYs", value: 0x02) {
            _ = try LESetExtendedScanParametersCommand.decode(parameters: bytes("00 00 02 01 60 00 30 00"))
        }
        expectInvalidValue(field: "Scanning_PHYs", value: 0x00) {
            _ = try LESetExtendedScanParametersCommand.decode(parameters: bytes("00 00 00"))
        }
    }

    @Test func invalidScanValues() {
        expectInvalidValue(field: "LE_Scan_Type", value: 2) {
            _ = try LESetScanParametersCommand.decode(parameters: bytes("02 10 00 10 00 00 00"))
        }
        expectInvalidValue(field: "Scanning_Filter_Policy", value: 4) {
            _ = try LESetScanParametersCommand.decode(parameters: bytes("01 10 00 10 00 00 04"))
        }
        expectInvalidValue(field: "Filter_Duplicates", value: 2) {
            _ = try LESetScanEnableCommand.decode(parameters: bytes("01 02"))
        }
        expectInvalidValue(field: "Filter_Duplicates", value: 3) {
            _ = try LESetExtendedScanEnableCommand.decode(parameters: bytes("01 03 00 00 00 00"))
        }
    }
}
