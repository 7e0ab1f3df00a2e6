import BluetoothCore
import BluetoothHCI
import Testing

/// LE Advertising Report and LE Extended Advertising Report (Core 6.0, Vol 4, Part E,
/// 7.7.65.2 and 7.7.65.13). Each report's fields are laid out together, report after report.
@Suite(.timeLimit(.minutes(1))) struct AdvertisingReportTests {
    @Test func legacyReports() throws {
        // Two reports:
        //   ADV_IND (00), random (01), C0:FF:EE:00:11:22, 3 octets of data 02 01 06, RSSI -70 (BA);
        //   SCAN_RSP (04), public (00), 00:11:22:33:44:55, no data, RSSI not available (7F).
        // Length: subevent + count + 13 + 10 = 25 (0x19).
        let event = LEAdvertisingReportEvent(reports: [
            .init(eventType: .advInd, addressType: .random, address: address("C0:FF:EE:00:11:22"), data: [0x02, 0x01, 0x06], rssi: -70),
            .init(eventType: .scanRsp, addressType: .public, address: address("00:11:22:33:44:55"), data: [], rssi: nil),
        ])
        try expectEvent(.le(.advertisingReport(event)),
                        "3e 19 02 02 00 01 22 11 00 ee ff c0 03 02 01 06 ba 04 00 55 44 33 22 11 00 00 7f")
        #expect(event.reports[0].advertiser == DeviceAddress(address("C0:FF:EE:00:11:22"), type: .random))
        #expect(event.reports[0].eventType.isConnectable)
    }

    @Test func legacyReportWith31Octets() throws {
        let data = [UInt8](repeating: 0x11, count: 31)
        let event = LEAdvertisingReportEvent(reports: [
            .init(eventType: .advNonconnInd, addressType: .public, address: .zero, data: data, rssi: -1),
        ])
        // 2 + 1 + 1 + 6 + 1 + 31 + 1 = 43 (0x2B).
        try expectEvent(.le(.advertisingReport(event)),
                        "3e 2b 02 01 03 00 00 00 00 00 00 00 1f" + String(repeating: " 11", count: 31) + " ff")
    }

    @Test func legacyReportDataLongerThan31IsRejected() {
        // Data_Length 40 (0x28) with 40 octets of data: the event is long enough, the value is not allowed.
        let packet = bytes("3e 34 02 01 00 00 22 11 00 ee ff c0 28") + [UInt8](repeating: 0, count: 40) + [0xBA]
        #expect(packet.count == 2 + 0x34)
        expectInvalidValue(field: "Data_Length", value: 40) { _ = try HCIEvent.decode(packet) }
    }

    @Test func legacyReportWithInvalidEventType() {
        expectInvalidValue(field: "Event_Type", value: 5) {
            _ = try HCIEvent.decode(bytes("3e 0c 02 01 05 00 22 11 00 ee ff c0 00 ba"))
        }
        expectInvalidValue(field: "Address_Type", value: 4) {
            _ = try HCIEvent.decode(bytes("3e 0c 02 01 00 04 22 11 00 ee ff c0 00 ba"))
        }
    }

    @Test func legacyReportCountLargerThanReports() {
        // Num_Reports says 2, one report follows.
        #expect(throws: PacketDecodingError.self) {
            _ = try HCIEvent.decode(bytes("3e 0c 02 02 00 00 22 11 00 ee ff c0 00 ba"))
        }
    }

    @Test func extendedLegacyReport() throws {
        // Event_Type connectable | scannable | legacy = 0x0013, data complete; random
        // C0:FF:EE:00:11:22; primary 1M, no secondary (00), no ADI (FF), TX power n/a (7F),
        // RSSI -50 (CE), no periodic interval, direct public 0, data 02 01 06.
        // Report 24 + 3 octets; length 1 + 1 + 27 = 29 (0x1D).
        let report = LEExtendedAdvertisingReportEvent.Report(
            eventType: [.connectable, .scannable, .legacy], addressType: .random, address: address("C0:FF:EE:00:11:22"),
            rssi: -50, data: [0x02, 0x01, 0x06])
        try expectEvent(.le(.extendedAdvertisingReport(LEExtendedAdvertisingReportEvent(reports: [report]))),
                        "3e 1d 0d 01 13 00 01 22 11 00 ee ff c0 01 00 ff 7f ce 00 00 00 00 00 00 00 00 00 03 02 01 06")
        #expect(report.advertiser == DeviceAddress(address("C0:FF:EE:00:11:22"), type: .random))
    }

    @Test func extendedReportFragment() throws {
        // Directed (0x04) with data status "incomplete, more to come" (01 << 5 = 0x20) → 0x0024;
        // anonymous (FF); primary Coded (03), secondary 2M (02), SID 3, TX power -8 (F8), RSSI
        // n/a, periodic interval 0x0050, direct address an unresolved RPA (FE) 4A:00:00:00:00:01.
        let report = LEExtendedAdvertisingReportEvent.Report(
            eventType: .directed, dataStatus: .incompleteMoreToCome, addressType: .anonymous, address: .zero,
            primaryPHY: .leCoded, secondaryPHY: .le2M, advertisingSID: 3, txPower: -8, rssi: nil,
            periodicAdvertisingInterval: 0x0050, directAddressType: .unresolvedRandom, directAddress: address("4A:00:00:00:00:01"),
            data: [])
        #expect(report.advertiser == nil)
        try expectEvent(.le(.extendedAdvertisingReport(LEExtendedAdvertisingReportEvent(reports: [report]))),
                        "3e 1a 0d 01 24 00 ff 00 00 00 00 00 00 03 02 03 f8 7f 50 00 fe 01 00 00 00 00 4a 00")
    }

    @Test func twoExtendedReports() throws {
        let first = LEExtendedAdvertisingReportEvent.Report(eventType: [.connectable], addressType: .public, address: address("00:11:22:33:44:55"),
                                                            secondaryPHY: .le1M, advertisingSID: 0, rssi: -40, data: [0xAA])
        let second = LEExtendedAdvertisingReportEvent.Report(eventType: [.scanResponse, .scannable], addressType: .publicIdentity,
                                                             address: address("00:11:22:33:44:55"), rssi: -41, data: [0xBB, 0xCC])
        // 1 + 1 + (24 + 1) + (24 + 2) = 53 (0x35).
        try expectEvent(.le(.extendedAdvertisingReport(LEExtendedAdvertisingReportEvent(reports: [first, second]))), """
            3e 35 0d 02
            01 00 00 55 44 33 22 11 00 01 01 00 7f d8 00 00 00 00 00 00 00 00 00 01 aa
            0a 00 02 55 44 33 22 11 00 01 00 ff 7f d7 00 00 00 00 00 00 00 00 00 02 bb cc
            """.replacingOccurrences(of: "\n", with: " "))
    }

    @Test func extendedReportInvalidValues() {
        // Data status 0b11 (bits 5-6 of 0x0060) is reserved.
        expectInvalidValue(field: "Event_Type data status", value: 3) {
            _ = try HCIEvent.decode(bytes("3e 1a 0d 01 60 00 00 00 00 00 00 00 00 01 00 ff 7f 7f 00 00 00 00 00 00 00 00 00 00"))
        }
        // Primary_PHY 0x07.
        expectInvalidValue(field: "Primary_PHY", value: 7) {
            _ = try HCIEvent.decode(bytes("3e 1a 0d 01 00 00 00 00 00 00 00 00 00 07 00 ff 7f 7f 00 00 00 00 00 00 00 00 00 00"))
        }
        // Advertising_SID 0x10 (only 0...15 and 0xFF).
        expectInvalidValue(field: "Advertising_SID", value: 0x10) {
            _ = try HCIEvent.decode(bytes("3e 1a 0d 01 00 00 00 00 00 00 00 00 00 01 00 10 7f 7f 00 00 00 00 00 00 00 00 00 00"))
        }
        // Address_Type 0x05.
        expectInvalidValue(field: "Address_Type", value: 5) {
            _ = try HCIEvent.decode(bytes("3e 1a 0d 01 00 00 05 00 00 00 00 00 00 01 00 ff 7f 7f 00 00 00 00 00 00 00 00 00 00"))
        }
    }
}
