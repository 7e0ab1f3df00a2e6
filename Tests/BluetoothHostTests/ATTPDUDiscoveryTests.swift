import BluetoothCore
import Testing
import BluetoothHost

private func expectRoundTrip(_ pdu: ATTPDU, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(pdu.encode() == bytes, sourceLocation: sourceLocation)
    #expect(try ATTPDU.decode(bytes) == pdu, sourceLocation: sourceLocation)
}

/// 6E400001-B5A3-F393-E0A9-E50E24DCCA9E, least significant octet first.
private let nusLittleEndian: [UInt8] = [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0,
                                        0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E]
private let nus: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"

@Suite(.timeLimit(.minutes(1))) struct ATTPDUDiscoveryTests {
    @Test func errorResponse() throws {
        // Request opcode 0x0A (Read Request), handle 0x0012, error 0x02.
        let pdu = ATTPDU.errorResponse(.init(requestOpcode: .readRequest, handle: 0x0012, code: .readNotPermitted))
        try expectRoundTrip(pdu, [0x01, 0x0A, 0x12, 0x00, 0x02])
        #expect(pdu.kind == .response)
    }

    @Test func exchangeMTU() throws {
        try expectRoundTrip(.exchangeMTURequest(.init(clientRxMTU: 247)), [0x02, 0xF7, 0x00])
        try expectRoundTrip(.exchangeMTUResponse(.init(serverRxMTU: 517)), [0x03, 0x05, 0x02])
        #expect(ATTPDU.exchangeMTURequest(.init(clientRxMTU: 247)).expectedResponseOpcode == .exchangeMTUResponse)
    }

    @Test func findInformation() throws {
        try expectRoundTrip(.findInformationRequest(.init(startingHandle: 0x0001, endingHandle: 0xFFFF)),
                            [0x04, 0x01, 0x00, 0xFF, 0xFF])
        // Format 0x01: (0x0001, 0x2800) (0x0002, 0x2803).
        try expectRoundTrip(.findInformationResponse(.init(entries: [.init(handle: 1, type: BluetoothUUID(UInt16(0x2800))),
                                                                     .init(handle: 2, type: BluetoothUUID(UInt16(0x2803)))])),
                            [0x05, 0x01, 0x01, 0x00, 0x00, 0x28, 0x02, 0x00, 0x03, 0x28])
        // Format 0x02: handle 0x0010 and a 128-bit UUID.
        let long = ATTFindInformationResponse(entries: [.init(handle: 0x10, type: nus)])
        #expect(long.format == .uuid128)
        try expectRoundTrip(.findInformationResponse(long), [0x05, 0x02, 0x10, 0x00] + nusLittleEndian)
    }

    @Test func findInformationWithMixedWidthsUses128BitForm() throws {
        let response = ATTFindInformationResponse(entries: [.init(handle: 1, type: BluetoothUUID(UInt16(0x2800))),
                                                            .init(handle: 2, type: nus)])
        #expect(response.format == .uuid128)
        // 0x2800 written in full: 00002800-0000-1000-8000-00805F9B34FB, least significant first.
        let primaryService128: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80,
                                          0x00, 0x10, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00]
        let bytes = [0x05, 0x02, 0x01, 0x00] + primaryService128 + [0x02, 0x00] + nusLittleEndian
        #expect(ATTPDU.findInformationResponse(response).encode() == bytes)
        guard case let .findInformationResponse(decoded) = try ATTPDU.decode(bytes) else {
            Issue.record("not a Find Information Response")
            return
        }
        #expect(decoded.entries == response.entries)
        #expect(ATTFindInformationResponse(format: .uuid16, entries: [.init(handle: 2, type: nus)]) == nil)
    }

    @Test func findByTypeValue() throws {
        // Primary Service (0x2800) with value 0x180D (Heart Rate), as GATT sends it.
        try expectRoundTrip(.findByTypeValueRequest(.init(startingHandle: 1, endingHandle: 0xFFFF, attributeType: 0x2800,
                                                          attributeValue: [0x0D, 0x18])),
                            [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18])
        try expectRoundTrip(.findByTypeValueResponse(.init(handlesInformation: [
            .init(foundAttributeHandle: 1, groupEndHandle: 5), .init(foundAttributeHandle: 6, groupEndHandle: 10),
        ])), [0x07, 0x01, 0x00, 0x05, 0x00, 0x06, 0x00, 0x0A, 0x00])
    }

    @Test func readByType() throws {
        try expectRoundTrip(.readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                     attributeType: BluetoothUUID(UInt16(0x2803)))),
                            [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28])
        try expectRoundTrip(.readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF, attributeType: nus)),
                            [0x08, 0x01, 0x00, 0xFF, 0xFF] + nusLittleEndian)
        // Two characteristic declarations, 7 octets each: handle, then properties 0x02,
        // value handle, UUID 0x2A00 / 0x2A01.
        let response = try #require(ATTReadByTypeResponse(entries: [
            .init(handle: 0x0002, value: [0x02, 0x03, 0x00, 0x00, 0x2A]),
            .init(handle: 0x0004, value: [0x02, 0x05, 0x00, 0x01, 0x2A]),
        ]))
        #expect(response.length == 7)
        try expectRoundTrip(.readByTypeResponse(response),
                            [0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A, 0x04, 0x00, 0x02, 0x05, 0x00, 0x01, 0x2A])
    }

    @Test func readByTypeResponseRefusesWhatItCannotEncode() {
        #expect(ATTReadByTypeResponse(entries: []) == nil)
        #expect(ATTReadByTypeResponse(entries: [.init(handle: 1, value: [1]), .init(handle: 2, value: [1, 2])]) == nil)
        #expect(ATTReadByTypeResponse(entries: [.init(handle: 1, value: Array(repeating: 0, count: 254))]) == nil)
        #expect(ATTReadByTypeResponse(entries: [.init(handle: 1, value: Array(repeating: 0, count: 253))])?.length == 255)
    }

    @Test func readByGroupType() throws {
        try expectRoundTrip(.readByGroupTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                          attributeGroupType: BluetoothUUID(UInt16(0x2800)))),
                            [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        // Length 6: handle, end group handle, 16-bit service UUID (0x1800, 0x1801).
        let response = try #require(ATTReadByGroupTypeResponse(entries: [
            .init(handle: 1, endGroupHandle: 5, value: [0x00, 0x18]),
            .init(handle: 6, endGroupHandle: 10, value: [0x01, 0x18]),
        ]))
        try expectRoundTrip(.readByGroupTypeResponse(response),
                            [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x0A, 0x00, 0x01, 0x18])
        #expect(ATTReadByGroupTypeResponse(entries: [.init(handle: 1, endGroupHandle: 2, value: [1]),
                                                     .init(handle: 3, endGroupHandle: 4, value: [])]) == nil)
    }
}
