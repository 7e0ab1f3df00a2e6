import BluetoothCore
import BluetoothHCI
import Testing

/// Extended advertising commands (Core 6.0, Vol 4, Part E, 7.8.52-7.8.60).
@Suite(.timeLimit(.minutes(1))) struct LEExtendedAdvertisingCommandTests {
    @Test func setAdvertisingSetRandomAddress() throws {
        try expectCommand(LESetAdvertisingSetRandomAddressCommand(advertisingHandle: 1, randomAddress: address("C0:11:22:33:44:55")),
                          "35 20 07 01 55 44 33 22 11 c0")
    }

    @Test func setExtendedAdvertisingParameters() throws {
        // Handle 0, connectable (0x0001), intervals 0x0000A0 / 0x0000F0 in 3 octets each, all
        // channels, public, no peer, accept all, no TX power preference (0x7F), primary 1M,
        // no skip, secondary 2M, SID 3, no scan request notifications; 25 octets.
        let command = LESetExtendedAdvertisingParametersCommand(
            advertisingHandle: 0, properties: .connectable, primaryIntervalMin: 0xA0, primaryIntervalMax: 0xF0,
            secondaryPHY: .le2M, advertisingSID: 3)
        try expectCommand(command, "36 20 19 00 01 00 a0 00 00 f0 00 00 07 00 00 00 00 00 00 00 00 00 7f 01 00 02 03 00")
        let coded = LESetExtendedAdvertisingParametersCommand(
            advertisingHandle: 2, properties: [.scannable, .includeTxPower], primaryIntervalMin: 0x012345, primaryIntervalMax: 0xFFFFFF,
            ownAddressType: .random, txPower: -4, primaryPHY: .leCoded, secondaryPHY: .leCoded, advertisingSID: 15,
            scanRequestNotificationEnable: true)
        try expectCommand(coded, "36 20 19 02 42 00 45 23 01 ff ff ff 07 01 00 00 00 00 00 00 00 00 fc 03 00 03 0f 01")
        try expectReturn(LESetExtendedAdvertisingParametersCommand.self, .init(selectedTxPower: -7), "0e 05 01 36 20 00 f9")
    }

    @Test func primaryPHYMustBeKnown() {
        expectInvalidValue(field: "Primary_Advertising_PHY", value: 0x07) {
            _ = try LESetExtendedAdvertisingParametersCommand.decode(
                parameters: bytes("00 01 00 a0 00 00 f0 00 00 07 00 00 00 00 00 00 00 00 00 7f 07 00 02 03 00"))
        }
    }

    @Test func eventPropertiesValidity() {
        // Legacy sets must be one of the five legacy PDU types (7.8.53, Table 7.2).
        #expect(AdvertisingEventProperties([.legacy, .connectable, .scannable]).isValid)
        #expect(AdvertisingEventProperties([.legacy]).isValid)
        #expect(!AdvertisingEventProperties([.legacy, .connectable]).isValid)
        // Extended: not connectable and scannable at once, not anonymous and connectable.
        #expect(AdvertisingEventProperties([.connectable]).isValid)
        #expect(AdvertisingEventProperties([.scannable]).isValid)
        #expect(AdvertisingEventProperties([]).isValid)
        #expect(!AdvertisingEventProperties([.connectable, .scannable]).isValid)
        #expect(!AdvertisingEventProperties([.connectable, .anonymous]).isValid)
    }

    @Test func setExtendedAdvertisingAndScanResponseData() throws {
        try expectCommand(LESetExtendedAdvertisingDataCommand(advertisingHandle: 1, data: [0x02, 0x01, 0x06]),
                          "37 20 07 01 03 00 03 02 01 06")
        try expectCommand(LESetExtendedScanResponseDataCommand(advertisingHandle: 0, operation: .lastFragment,
                                                               fragmentPreference: .controllerShouldNotFragment, data: [0xAA]),
                          "38 20 05 00 02 01 01 aa")
    }

    @Test func dataLongerThanACommandIsRefused() {
        // 252 octets cannot fit in the 255-octet parameters (7.8.54).
        expectInvalidValue(field: "Data_Length", value: 252) {
            _ = try LESetExtendedAdvertisingDataCommand.decode(parameters: [0, 3, 0, 252] + [UInt8](repeating: 0, count: 252))
        }
        expectInvalidValue(field: "Operation", value: 5) {
            _ = try LESetExtendedScanResponseDataCommand.decode(parameters: bytes("00 05 00 00"))
        }
    }

    @Test func hostFragmentsLongData() {
        // Up to 251 octets: one command, Operation complete (also when empty).
        for count in [0, 31, 251] {
            let commands = LESetExtendedAdvertisingDataCommand.fragments(of: Array(repeating: 7, count: count), advertisingHandle: 3)
            #expect(commands.map(\.operation) == [.complete])
            #expect(commands.first?.data.count == count)
            #expect(commands.first?.advertisingHandle == 3)
        }
        // 252: first + last; 600: first, intermediate, last, each at most 251, in order.
        let data = (0..<600).map { UInt8($0 % 256) }
        let commands = LESetExtendedScanResponseDataCommand.fragments(of: data, advertisingHandle: 1)
        #expect(commands.map(\.operation) == [.firstFragment, .intermediateFragment, .lastFragment])
        #expect(commands.map(\.data.count) == [251, 251, 98])
        #expect(commands.flatMap(\.data) == data)
        #expect(LESetExtendedAdvertisingDataCommand.fragments(of: Array(repeating: 1, count: 252), advertisingHandle: 0)
            .map(\.operation) == [.firstFragment, .lastFragment])
        let longest = LESetExtendedAdvertisingDataCommand.fragments(of: Array(repeating: 1, count: 1650), advertisingHandle: 0)
        #expect(longest.count == 7)
        #expect(longest.allSatisfy { $0.encode().count <= 3 + 255 })
    }

    @Test func setExtendedAdvertisingEnable() throws {
        // Two sets, one after the other: handle 0 for 500 × 10 ms, handle 2 for 5 events.
        try expectCommand(LESetExtendedAdvertisingEnableCommand(enable: true, sets: [
            .init(advertisingHandle: 0, duration: 500), .init(advertisingHandle: 2, maxExtendedAdvertisingEvents: 5),
        ]), "39 20 0a 01 02 00 f4 01 00 02 00 00 05")
        // Disabling with no sets disables them all (7.8.56).
        try expectCommand(LESetExtendedAdvertisingEnableCommand(enable: false, sets: []), "39 20 02 00 00")
        expectInvalidValue(field: "Num_Sets", value: 0) {
            _ = try LESetExtendedAdvertisingEnableCommand.decode(parameters: bytes("01 00"))
        }
        #expect(throws: PacketDecodingError.self) {
            _ = try LESetExtendedAdvertisingEnableCommand.decode(parameters: bytes("01 02 00 f4 01 00"))
        }
    }

    @Test func setInformationAndRemoval() throws {
        try expectCommand(LEReadMaximumAdvertisingDataLengthCommand(), "3a 20 00")
        try expectReturn(LEReadMaximumAdvertisingDataLengthCommand.self, .init(maximumAdvertisingDataLength: 0x0672), "0e 06 01 3a 20 00 72 06")
        try expectCommand(LEReadNumberOfSupportedAdvertisingSetsCommand(), "3b 20 00")
        try expectReturn(LEReadNumberOfSupportedAdvertisingSetsCommand.self, .init(numSupportedAdvertisingSets: 4), "0e 05 01 3b 20 00 04")
        try expectCommand(LERemoveAdvertisingSetCommand(advertisingHandle: 2), "3c 20 01 02")
        try expectCommand(LEClearAdvertisingSetsCommand(), "3d 20 00")
    }

    @Test func advertisingSetTerminatedEvent() throws {
        // LE meta 0x3E, length 6: subevent 0x12, status success, handle 1, connection 0x0040, 3 events.
        try expectEvent(.le(.advertisingSetTerminated(LEAdvertisingSetTerminatedEvent(
            advertisingHandle: 1, connectionHandle: 0x0040, numCompletedExtendedAdvertisingEvents: 3))), "3e 06 12 00 01 40 00 03")
        try expectEvent(.le(.advertisingSetTerminated(LEAdvertisingSetTerminatedEvent(
            status: .limitReached, advertisingHandle: 0, connectionHandle: 0, numCompletedExtendedAdvertisingEvents: 5))), "3e 06 12 43 00 00 00 05")
    }
}
