import BluetoothCore
import Testing
import BluetoothHost

/// Encodes `field` alone and checks the bytes, then decodes the bytes back to the field.
private func expectRoundTrip(_ field: ADField, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(try AdvertisingData([field]).encoded(maximumLength: 255) == bytes, sourceLocation: sourceLocation)
    #expect(try AdvertisingData.decode(bytes).fields == [field], sourceLocation: sourceLocation)
}

private let nus: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
private let nusLittleEndian: [UInt8] = [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0,
                                        0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E]

@Suite(.timeLimit(.minutes(1))) struct AdvertisingDataFieldTests {
    @Test func flags() throws {
        try expectRoundTrip(.flags(.leOnlyGeneralDiscoverable), [0x02, 0x01, 0x06])
        try expectRoundTrip(.flags([.leLimitedDiscoverableMode, .simultaneousLEAndBREDRController]), [0x02, 0x01, 0x09])
        // Octets after the first are ignored (CSS A.1.3); the structure stays untyped so it
        // re-encodes unchanged.
        let long = try AdvertisingData.decode([0x03, 0x01, 0x06, 0xFF])
        #expect(long.flags == .leOnlyGeneralDiscoverable)
        #expect(long.fields == [.other(type: .flags, data: [0x06, 0xFF])])
    }

    @Test func serviceUUIDLists() throws {
        try expectRoundTrip(.serviceUUIDs16([0x180D, 0x180F], complete: false), [0x05, 0x02, 0x0D, 0x18, 0x0F, 0x18])
        try expectRoundTrip(.serviceUUIDs16([], complete: true), [0x01, 0x03])
        try expectRoundTrip(.serviceUUIDs32([0x1234_5678], complete: true), [0x05, 0x05, 0x78, 0x56, 0x34, 0x12])
        try expectRoundTrip(.serviceUUIDs32([0x1234_5678], complete: false), [0x05, 0x04, 0x78, 0x56, 0x34, 0x12])
        try expectRoundTrip(.serviceUUIDs128([nus], complete: true), [0x11, 0x07] + nusLittleEndian)
        try expectRoundTrip(.serviceUUIDs128([nus], complete: false), [0x11, 0x06] + nusLittleEndian)
    }

    @Test func solicitationUUIDs() throws {
        try expectRoundTrip(.serviceSolicitationUUIDs16([0x1812]), [0x03, 0x14, 0x12, 0x18])
        try expectRoundTrip(.serviceSolicitationUUIDs32([0xAABB_CCDD]), [0x05, 0x1F, 0xDD, 0xCC, 0xBB, 0xAA])
        try expectRoundTrip(.serviceSolicitationUUIDs128([nus]), [0x11, 0x15] + nusLittleEndian)
        let data = AdvertisingData([.serviceSolicitationUUIDs16([0x1812]), .serviceSolicitationUUIDs128([nus])])
        #expect(data.solicitedServiceUUIDs == [BluetoothUUID(UInt16(0x1812)), nus])
    }

    @Test func names() throws {
        try expectRoundTrip(.shortenedLocalName("Blu"), [0x04, 0x08, 0x42, 0x6C, 0x75])
        try expectRoundTrip(.completeLocalName("Bluejay"), [0x08, 0x09, 0x42, 0x6C, 0x75, 0x65, 0x6A, 0x61, 0x79])
        // "é" is C3 A9; a shortened name cut after C3 still decodes.
        #expect(try AdvertisingData.decode([0x03, 0x08, 0x41, 0xC3]).shortenedLocalName?.hasPrefix("A") == true)
    }

    @Test func powerIntervalsAndAppearance() throws {
        try expectRoundTrip(.txPowerLevel(-8), [0x02, 0x0A, 0xF8])
        // 7.5 ms … 4 s.
        try expectRoundTrip(.peripheralConnectionIntervalRange(min: 0x0006, max: 0x0C80), [0x05, 0x12, 0x06, 0x00, 0x80, 0x0C])
        // 0x03C1: Keyboard.
        try expectRoundTrip(.appearance(0x03C1), [0x03, 0x19, 0xC1, 0x03])
        // 0x0800 × 0.625 ms = 1.28 s.
        try expectRoundTrip(.advertisingInterval(0x0800), [0x03, 0x1A, 0x00, 0x08])
        try expectRoundTrip(.advertisingIntervalLong(0x01_2345), [0x04, 0x2F, 0x45, 0x23, 0x01])
        try expectRoundTrip(.advertisingIntervalLong(0x0123_4567), [0x05, 0x2F, 0x67, 0x45, 0x23, 0x01])
        let data = try AdvertisingData.decode([0x04, 0x2F, 0x45, 0x23, 0x01, 0x05, 0x12, 0x06, 0x00, 0x80, 0x0C,
                                               0x03, 0x19, 0xC1, 0x03])
        #expect(data.advertisingInterval == 0x01_2345)
        #expect(data.peripheralConnectionIntervalRange?.min == 6)
        #expect(data.peripheralConnectionIntervalRange?.max == 3200)
        #expect(data.appearance == 0x03C1)
        #expect(try AdvertisingData.decode([0x03, 0x2F, 0x45, 0x23]).fields == [.other(type: .advertisingIntervalLong,
                                                                                       data: [0x45, 0x23])])
    }

    @Test func serviceData() throws {
        // Battery Service 0x180F, level 100.
        try expectRoundTrip(.serviceData16(uuid: 0x180F, data: [0x64]), [0x04, 0x16, 0x0F, 0x18, 0x64])
        try expectRoundTrip(.serviceData32(uuid: 0x1234_5678, data: [0x01]), [0x06, 0x20, 0x78, 0x56, 0x34, 0x12, 0x01])
        // Length 0x13 = type + 16-octet UUID + 2 data octets.
        try expectRoundTrip(.serviceData128(uuid: nus, data: [0x01, 0x02]), [0x13, 0x21] + nusLittleEndian + [0x01, 0x02])
        #expect(ADField.serviceData(uuid: BluetoothUUID(UInt16(0x180F)), data: [1]) == .serviceData16(uuid: 0x180F, data: [1]))
        #expect(ADField.serviceData(uuid: nus, data: []) == .serviceData128(uuid: nus, data: []))
    }

    @Test func addresses() throws {
        let first = try #require(BluetoothAddress("C0:FF:EE:00:11:22"))
        let second = try #require(BluetoothAddress("01:02:03:04:05:06"))
        try expectRoundTrip(.publicTargetAddresses([first]), [0x07, 0x17, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0])
        try expectRoundTrip(.randomTargetAddresses([first, second]),
                            [0x0D, 0x18, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        // Address then flags octet: bit 0 set = random.
        try expectRoundTrip(.leBluetoothDeviceAddress(DeviceAddress(first, type: .random)),
                            [0x08, 0x1B, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0, 0x01])
        let data = try AdvertisingData.decode([0x0D, 0x18, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0, 0x06, 0x05, 0x04, 0x03, 0x02,
                                               0x01, 0x08, 0x1B, 0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0, 0x00])
        #expect(data.randomTargetAddresses == [first, second])
        #expect(data.publicTargetAddresses.isEmpty)
        #expect(data.leBluetoothDeviceAddress == DeviceAddress(first, type: .public))
    }

    @Test func leRole() throws {
        try expectRoundTrip(.leRole(.peripheralPreferred), [0x02, 0x1C, 0x02])
        #expect(try AdvertisingData.decode([0x02, 0x1C, 0x01]).leRole == .centralOnly)
    }

    @Test func uriSchemes() throws {
        // 0x17 = "https:" (Assigned Numbers 2.7), then "//www.bluetooth.com" (19 octets).
        try expectRoundTrip(.uri("https://www.bluetooth.com"),
                            [0x15, 0x24, 0x17] + Array("//www.bluetooth.com".utf8))
        try expectRoundTrip(.uri("http://x"), [0x05, 0x24, 0x16, 0x2F, 0x2F, 0x78])
        // No scheme in the table: 0x01, then the URI written out.
        try expectRoundTrip(.uri("foo:bar"), [0x09, 0x24, 0x01] + Array("foo:bar".utf8))
        // Code point 0xBB ("bluetooth:") is the two-octet UTF-8 character C2 BB.
        try expectRoundTrip(.uri("bluetooth:abc"), [0x06, 0x24, 0xC2, 0xBB, 0x61, 0x62, 0x63])
        #expect(try AdvertisingData.decode([0x05, 0x24, 0x16, 0x2F, 0x2F, 0x78]).uri == "http://x")
    }

    @Test func malformedURIsAreNotDecoded() throws {
        // Code point 0xC0 (C3 80) is unassigned; FF is not UTF-8; empty data has no scheme.
        for bytes: [UInt8] in [[0x04, 0x24, 0xC3, 0x80, 0x41], [0x03, 0x24, 0xFF, 0x41], [0x01, 0x24]] {
            let data = try AdvertisingData.decode(bytes)
            #expect(data.uri == nil)
            #expect(data.fields.count == 1)
            #expect(data.fields.first?.type == .uri)
        }
    }

    @Test func manufacturerSpecificData() throws {
        // Company 0x0059 (Nordic), little-endian, then the company's octets.
        try expectRoundTrip(.manufacturerSpecificData(companyID: 0x0059, data: [0x01, 0x02]), [0x05, 0xFF, 0x59, 0x00, 0x01, 0x02])
        #expect(try AdvertisingData.decode([0x02, 0xFF, 0x59]).manufacturerData == nil)
    }

    @Test func unknownTypesArePreserved() throws {
        try expectRoundTrip(.other(type: AdvertisingDataType(rawValue: 0x3D), data: [0x01, 0x02]), [0x03, 0x3D, 0x01, 0x02])
        #expect(AdvertisingDataType(rawValue: 0x3D).name == "3D Information Data")
        #expect(AdvertisingDataType.manufacturerSpecificData.description == "Manufacturer Specific Data (0xFF)")
    }
}
