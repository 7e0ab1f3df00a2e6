import BluetoothCore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1))) struct ByteCodingTests {
    @Test func readsLittleEndianFieldsAndReportsTruncation() throws {
        var reader = ByteReader([0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xAA], context: "test packet")
        #expect(try reader.readUInt8() == 0x01)
        #expect(try reader.readUInt16() == 0x1234)
        #expect(try reader.readUInt32() == 0x1234_5678)
        #expect(reader.remainingCount == 1)
        #expect(throws: PacketDecodingError.truncated(context: "test packet", needed: 2, available: 1)) { try reader.readUInt16() }
        #expect(throws: PacketDecodingError.trailingBytes(context: "test packet", count: 1)) { try reader.expectEnd() }
        #expect(reader.readRemaining() == [0xAA])
        try reader.expectEnd()
    }

    @Test func readingASliceDoesNotDependOnItsIndices() throws {
        let bytes: [UInt8] = [0xFF, 0x02, 0x01]
        var reader = ByteReader(bytes[1...], context: "slice")
        #expect(try reader.readUInt16() == 0x0102)
    }

    @Test func writerIsTheReadersTwin() throws {
        var writer = ByteWriter()
        writer.write(UInt8(7))
        writer.write(UInt16(0xBEEF))
        writer.writeUInt24(0x0A0B0C)
        writer.write(UInt64(1))
        writer.write(Int8(-2))
        #expect(writer.bytes == [0x07, 0xEF, 0xBE, 0x0C, 0x0B, 0x0A, 1, 0, 0, 0, 0, 0, 0, 0, 0xFE])
        var reader = ByteReader(writer.bytes, context: "round trip")
        #expect(try reader.readUInt8() == 7)
        #expect(try reader.readUInt16() == 0xBEEF)
        #expect(try reader.readUInt24() == 0x0A0B0C)
        #expect(try reader.readUInt64() == 1)
        #expect(try reader.readInt8() == -2)
    }

    @Test func integersOfAnyWidthAndSignRoundTripLeastSignificantFirst() throws {
        var writer = ByteWriter()
        writer.writeInteger(Int16(-2))
        writer.writeInteger(UInt32(0x0102_0304))
        writer.writeInteger(UInt128(0x0F) << 120 | 0xA1)
        #expect(writer.bytes == [0xFE, 0xFF, 0x04, 0x03, 0x02, 0x01, 0xA1] + [UInt8](repeating: 0, count: 14) + [0x0F])
        var reader = ByteReader(writer.bytes, context: "integers")
        #expect(try reader.readInteger(Int16.self) == -2)
        #expect(try reader.readInteger(UInt32.self) == 0x0102_0304)
        #expect(try reader.readInteger(UInt128.self) == UInt128(0x0F) << 120 | 0xA1)
        #expect(throws: PacketDecodingError.truncated(context: "integers", needed: 2, available: 0)) { try reader.readInteger(Int16.self) }
        #expect(ByteWriter.littleEndianBytes(of: Int32(-1)) == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(ByteReader.integer(littleEndian: [0x34, 0x12], as: UInt32.self) == 0x1234)
        #expect(ByteReader.integer(littleEndian: [0x01, 0x02, 0x03], as: UInt16.self) == 0x0201)
        #expect(ByteReader.integer(littleEndian: [0x00, 0x80], as: Int16.self) == .min)
    }

    @Test func errorsNameTheirPacketAndCanBeRenamed() {
        let error = PacketDecodingError.invalidValue(context: "ATT PDU (entries)", field: "length", value: 7)
        #expect(error.context == "ATT PDU (entries)")
        #expect(error.replacingContext("ATT Read Response") == .invalidValue(context: "ATT Read Response", field: "length", value: 7))
        #expect("\(error)" == "ATT PDU (entries): invalid length 0x7")
    }

    @Test func hexRoundTripsAndRejectsNonsense() {
        #expect(Hex.encode([0x01, 0xAB]) == "01ab")
        #expect(Hex.encode([0x01, 0xAB], separator: ":") == "01:ab")
        #expect(Hex.decode("0x01AB") == [0x01, 0xAB])
        #expect(Hex.decode("01 ab") == [0x01, 0xAB])
        #expect(Hex.decode("0") == nil)
        #expect(Hex.decode("zz") == nil)
    }

    @Test func numbersPadToTheirDigitsAndParseOnlyExactly() {
        #expect(Hex.format(0x3E) == "0x3E")
        #expect(Hex.format(UInt16(0x12), digits: 4) == "0x0012")
        #expect(Hex.digits(UInt16(0xAB), count: 4) == "00AB")
        #expect(Hex.digits(UInt128(1) << 124, count: 32, uppercase: false) == "1" + String(repeating: "0", count: 31))
        #expect(Hex.digits(UInt64(0x1F), count: 16, uppercase: false) == "000000000000001f")
        #expect(Hex.number("000000000000001F", digits: 16) == 0x1F)
        #expect(Hex.number("1f", digits: 16) == nil)
        #expect(Hex.number("+000000000000001", digits: 16) == nil)
        #expect(Hex.number("0x00000000000001", digits: 16) == nil)
        #expect(Hex.number(String(repeating: "f", count: 33), digits: 33) == nil)
    }
}

@Suite(.timeLimit(.minutes(1))) struct AddressTests {
    @Test func parsesFormatsAndWritesLeastSignificantByteFirst() throws {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:11:22"))
        #expect(address.description == "C0:FF:EE:00:11:22")
        #expect(address.bytes == [0xC0, 0xFF, 0xEE, 0x00, 0x11, 0x22])
        #expect(address.rawValue == 0xC0FF_EE00_1122)
        #expect(BluetoothAddress("c0-ff-ee-00-11-22") == address)
        #expect(BluetoothAddress("C0FFEE001122") == address)
        var writer = ByteWriter()
        address.write(to: &writer)
        // HCI carries BD_ADDR least significant octet first (Core 6.0, Vol 4, Part E, 5.2).
        #expect(writer.bytes == [0x22, 0x11, 0x00, 0xEE, 0xFF, 0xC0])
        #expect(address.littleEndianBytes == writer.bytes)
        var reader = ByteReader(writer.bytes, context: "address")
        #expect(try BluetoothAddress(reading: &reader) == address)
    }

    @Test func rejectsMalformedAddresses() {
        for text in ["", "C0:FF:EE:00:11", "C0:FF:EE:00:11:2G", "C0:FF:EE:00:11:223", "C0FFEE0011"] {
            #expect(BluetoothAddress(text) == nil, "\(text)")
        }
        #expect(BluetoothAddress(bytes: [1, 2, 3]) == nil)
        #expect(BluetoothAddress(rawValue: 0xFFFF_0000_0000_0001).rawValue == 0x0000_0000_0001, "only 48 bits")
    }

    @Test func deviceAddressAndIdentifierStringsRoundTrip() throws {
        let random = try #require(DeviceAddress("C0:FF:EE:00:11:22/random"))
        #expect(random.type == .random)
        #expect(random.description == "C0:FF:EE:00:11:22/random")
        #expect(DeviceAddress(random.description) == random)
        let publicAddress = try #require(DeviceAddress("00:11:22:33:44:55"))
        #expect(publicAddress.type == .public)
        #expect(publicAddress.description == "00:11:22:33:44:55")
        #expect(DeviceAddress("00:11:22:33:44:55/other") == nil)
        let json = try JSONEncoder().encode(random)
        #expect(try JSONDecoder().decode(DeviceAddress.self, from: json) == random)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(BluetoothAddress.self, from: Data("\"nope\"".utf8)) }
    }
}

@Suite(.timeLimit(.minutes(1))) struct UUIDTests {
    @Test func shortAndFullFormsAreTheSameUUID() throws {
        // Texts in variables: `BluetoothUUID("180D")` with a literal is a literal coercion
        // (SE-0213), not the failable parser under test.
        let shortText = "180D", fullText = "0000180D-0000-1000-8000-00805F9B34FB"
        let short = try #require(BluetoothUUID(shortText))
        let full = try #require(BluetoothUUID(fullText))
        #expect(short == full)
        #expect(short.uint16 == 0x180D)
        #expect(full.description == "180D")
        #expect(short.attBytes == [0x0D, 0x18])
        #expect(BluetoothUUID(littleEndianBytes: [0x0D, 0x18]) == short)
    }

    @Test func custom128BitUUIDsKeepTheirFullForm() throws {
        let text = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid.uint16 == nil)
        #expect(uuid.description == text)
        #expect(uuid.attBytes.count == 16)
        #expect(uuid.attBytes.first == 0x9E, "little-endian on the wire")
        #expect(BluetoothUUID(littleEndianBytes: uuid.attBytes) == uuid)
    }

    @Test func thirtyTwoBitAliases() throws {
        let uuid = BluetoothUUID(UInt32(0x0001_FEED))
        #expect(uuid.uint16 == nil)
        #expect(uuid.uint32 == 0x0001_FEED)
        #expect(uuid.description == "0001FEED")
        #expect(BluetoothUUID(littleEndianBytes: [0xED, 0xFE, 0x01, 0x00]) == uuid)
    }

    @Test func rejectsMalformedUUIDs() {
        for text in ["", "18", "180G", "0000180D-0000-1000-8000-00805F9B34F", "0000180D00001000800000805F9B34FBAA"] {
            #expect(BluetoothUUID(text) == nil, "\(text)")
        }
        #expect(BluetoothUUID(littleEndianBytes: [1, 2, 3]) == nil)
    }

    /// The right length made of the wrong characters once gave a UUID of fewer than 16 bytes,
    /// whose description trapped (a saved restoration file could crash an app at start).
    @Test func rejectsStringsOfTheRightLengthThatAreNotHexadecimal() {
        let malformed = [
            String(repeating: " ", count: 32), String(repeating: " ", count: 36), String(repeating: "-", count: 36),
            "6E400001 B5A3 F393 E0A9 E50E24DCCA9E", "6E400001-B5A3-F393-E0A9E-50E24DCCA9E", "6E400001-B5A3-F393-E0A9-E50E24DCCA9G",
            "+E400001B5A3F393E0A9E50E24DCCA9E", "6E400001B5A3F393E0A9E50E24DCCA9é", "0x18 D", "é18D",
        ]
        for text in malformed {
            #expect(BluetoothUUID(text) == nil, "\"\(text)\"")
        }
    }

    @Test func everyFormRoundTrips() throws {
        let text = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        let uuid = try #require(BluetoothUUID(text))
        #expect(BluetoothUUID(text.lowercased()) == uuid)
        #expect(BluetoothUUID(text.replacingOccurrences(of: "-", with: "")) == uuid)
        #expect(BluetoothUUID(bigEndianBytes: uuid.bigEndianBytes) == uuid)
        #expect(BluetoothUUID(littleEndianBytes: uuid.littleEndianBytes128) == uuid)
        #expect(uuid.bigEndianBytes == [0x6E, 0x40, 0x00, 0x01, 0xB5, 0xA3, 0xF3, 0x93, 0xE0, 0xA9, 0xE5, 0x0E, 0x24, 0xDC, 0xCA, 0x9E])
        #expect(uuid.uuidString == text)
        let heartRate = BluetoothUUID(UInt16(0x180D))
        #expect(heartRate.uuidString == "0000180D-0000-1000-8000-00805F9B34FB")
        #expect(heartRate.bigEndianBytes.count == 16)
        #expect(BluetoothUUID(bigEndianBytes: [UInt8](repeating: 0, count: 15)) == nil)
    }

    @Test func orderIsThatOfTheWrittenForm() throws {
        let uuids = try ["FFFF", "0001", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "0000FEED", "00000000-0000-0000-0000-000000000001"]
            .map { try #require(BluetoothUUID($0)) }
        #expect(uuids.sorted().map(\.uuidString) == uuids.map(\.uuidString).sorted())
        #expect(Set([BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt32(0x180D))]).count == 1, "equal values hash alike")
    }
}
