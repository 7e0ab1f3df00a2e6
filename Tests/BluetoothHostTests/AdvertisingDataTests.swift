import BluetoothCore
import Testing
import BluetoothHost

/// A typical advertisement, checked by hand:
/// 02 01 06               Flags: LE General Discoverable, BR/EDR Not Supported
/// 03 03 0D 18            Complete List of 16-bit UUIDs: 0x180D
/// 05 09 42 6C 75 65      Complete Local Name "Blue"
/// 02 0A F4               TX Power Level −12 dBm
private let heartRateAdvertisement: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18,
                                               0x05, 0x09, 0x42, 0x6C, 0x75, 0x65, 0x02, 0x0A, 0xF4]

@Suite(.timeLimit(.minutes(1))) struct AdvertisingDataTests {
    @Test func parsesStructuresInOrder() throws {
        let data = try AdvertisingData.decode(heartRateAdvertisement)
        #expect(data.structures == [
            AdvertisingStructure(type: .flags, data: [0x06]),
            AdvertisingStructure(type: .completeServiceUUIDs16, data: [0x0D, 0x18]),
            AdvertisingStructure(type: .completeLocalName, data: Array("Blue".utf8)),
            AdvertisingStructure(type: .txPowerLevel, data: [0xF4]),
        ])
        #expect(data.flags == .leOnlyGeneralDiscoverable)
        #expect(data.serviceUUIDs == [BluetoothUUID(UInt16(0x180D))])
        #expect(data.hasCompleteServiceUUIDList)
        #expect(data.localName == "Blue")
        #expect(data.txPowerLevel == -12)
        #expect(try data.encoded() == heartRateAdvertisement)
    }

    @Test func zeroLengthEndsTheSignificantPart() throws {
        // Padded to 31 octets with zeros, as controllers report it; anything after the first
        // zero Length octet is ignored.
        let padded = heartRateAdvertisement + Array(repeating: 0, count: 31 - heartRateAdvertisement.count)
        #expect(try AdvertisingData.decode(padded) == AdvertisingData.decode(heartRateAdvertisement))
        let garbageAfterTerminator = heartRateAdvertisement + [0x00, 0x05, 0xFF]
        #expect(try AdvertisingData.decode(garbageAfterTerminator).structures.count == 4)
        #expect(try AdvertisingData.decode([]).structures.isEmpty)
    }

    @Test func structureOverrunningTheBuffer() {
        // Flags, then a Complete Local Name whose Length (5) claims 3 more octets than remain.
        let bytes: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x09, 0x41, 0x42]
        #expect(throws: PacketDecodingError.truncated(context: "AD structure at offset 3", needed: 5, available: 3)) {
            try AdvertisingData.decode(bytes)
        }
        // Lenient: the well-formed structures before it survive.
        let lenient = AdvertisingData.decodeLeniently(bytes)
        #expect(lenient.structures == [AdvertisingStructure(type: .flags, data: [0x06])])
        #expect(lenient.localName == nil)
        // A Length octet with nothing after it.
        #expect(throws: PacketDecodingError.truncated(context: "AD structure at offset 3", needed: 2, available: 0)) {
            try AdvertisingData.decode([0x02, 0x01, 0x06, 0x02])
        }
    }

    @Test func typeOnlyStructure() throws {
        // Length 1: the type and no data (an empty complete name).
        let data = try AdvertisingData.decode([0x01, 0x09])
        #expect(data.structures == [AdvertisingStructure(type: .completeLocalName, data: [])])
        #expect(data.completeLocalName == "")
    }

    @Test func serviceUUIDsOfEveryWidth() throws {
        // 16-bit incomplete 0x180D; 32-bit complete 0x12345678; 128-bit complete NUS.
        let bytes: [UInt8] = [0x03, 0x02, 0x0D, 0x18, 0x05, 0x05, 0x78, 0x56, 0x34, 0x12,
                              0x11, 0x07, 0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0,
                              0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E]
        let data = try AdvertisingData.decode(bytes)
        #expect(data.serviceUUIDs == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt32(0x1234_5678)),
                                      "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"])
        let built = AdvertisingData(ADField.serviceUUIDs(data.serviceUUIDs, complete: true))
        #expect(built.structures.map(\.type) == [.completeServiceUUIDs16, .completeServiceUUIDs32, .completeServiceUUIDs128])
    }

    @Test func encodingChecksTheLength() throws {
        let name = String(repeating: "x", count: 30)
        let data = AdvertisingData([.completeLocalName(name)])
        #expect(data.encodedLength == 32)
        #expect(throws: AdvertisingDataError.doesNotFit(needed: 32, available: 31)) { try data.encoded() }
        #expect(try data.encoded(maximumLength: 251).count == 32)
        let tooLong = AdvertisingData([.other(type: AdvertisingDataType(rawValue: 0x99), data: Array(repeating: 0, count: 255))])
        #expect(throws: AdvertisingDataError.structureTooLong(type: AdvertisingDataType(rawValue: 0x99), dataLength: 255)) {
            try tooLong.encoded(maximumLength: 1650)
        }
        #expect(AdvertisingDataError.doesNotFit(needed: 32, available: 31).description.contains("32"))
    }

    @Test func mergingWithTheScanResponse() throws {
        let advertisement = AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .shortenedLocalName("Blu")])
        let scanResponse = AdvertisingData([.completeLocalName("Bluejay"), .txPowerLevel(4)])
        let merged = advertisement.merging(scanResponse: scanResponse)
        #expect(merged.structures.map(\.type) == [.flags, .shortenedLocalName, .completeLocalName, .txPowerLevel])
        #expect(merged.localName == "Bluejay")
        #expect(merged.shortenedLocalName == "Blu")
        #expect(merged.txPowerLevel == 4)
        #expect(try merged.encoded(maximumLength: 62) == advertisement.encoded() + scanResponse.encoded())
    }

    @Test func malformedKnownStructuresAreSkippedByAccessors() throws {
        // TX Power with no data; a 16-bit list with an odd octet; LE Role 7; flags with no data.
        let bytes: [UInt8] = [0x01, 0x0A, 0x02, 0x03, 0x0D, 0x02, 0x1C, 0x07, 0x01, 0x01]
        let data = try AdvertisingData.decode(bytes)
        #expect(data.txPowerLevel == nil)
        #expect(data.serviceUUIDs.isEmpty)
        #expect(data.leRole == nil)
        #expect(data.flags == [])
        #expect(data.fields == [.other(type: .txPowerLevel, data: []), .other(type: .completeServiceUUIDs16, data: [0x0D]),
                                .other(type: .leRole, data: [0x07]), .other(type: .flags, data: [])])
        #expect(try AdvertisingData(data.fields).encoded() == bytes)
    }

    @Test func manufacturerAndServiceDataAccessors() throws {
        // Manufacturer 0x0059 [01 02]; service data 0x180F [64]; second manufacturer 0x004C [AA].
        let bytes: [UInt8] = [0x05, 0xFF, 0x59, 0x00, 0x01, 0x02, 0x04, 0x16, 0x0F, 0x18, 0x64, 0x04, 0xFF, 0x4C, 0x00, 0xAA]
        let data = try AdvertisingData.decode(bytes)
        #expect(data.manufacturerData == AdvertisingData.ManufacturerData(companyID: 0x0059, data: [1, 2]))
        #expect(data.allManufacturerData.map(\.companyID) == [0x0059, 0x004C])
        #expect(data.serviceData == [AdvertisingData.ServiceData(uuid: BluetoothUUID(UInt16(0x180F)), data: [0x64])])
        #expect(data.serviceData(for: "0000180F-0000-1000-8000-00805F9B34FB") == [0x64])
        #expect(data.serviceData(for: BluetoothUUID(UInt16(0x180D))) == nil)
    }
}
