import BluetoothCore
@testable import BluetoothTransport
import Testing

/// The btsnoop format as Wireshark reads it: a 16-byte header, then 24-byte record headers,
/// all big-endian, datalink 1002 (H4: the indicator byte leads each packet).
@Suite("btsnoop encoding")
struct BTSnoopTests {
    @Test func theFileHeaderIsMagicVersionOneAndDatalinkH4() throws {
        let header = BTSnoop.FileHeader().encode()
        #expect(header == [0x62, 0x74, 0x73, 0x6E, 0x6F, 0x6F, 0x70, 0x00, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        #expect(try BTSnoop.FileHeader.decode(header[...]) == BTSnoop.FileHeader(version: 1, datalink: 1002))
    }

    @Test func aHeaderThatIsNotBTSnoopIsRefused() {
        #expect(throws: PacketDecodingError.self) { try BTSnoop.FileHeader.decode(Array("not a snoop file".utf8)[...]) }
        #expect(throws: PacketDecodingError.self) { try BTSnoop.FileHeader.decode(BTSnoop.FileHeader().encode().dropLast()) }
    }

    @Test func aRecordIsLengthsFlagsDropsTimestampThenTheFramedPacket() throws {
        // HCI_Reset, sent by the host: a command (flag bit 1), host to controller (bit 0 clear).
        let reset = H4Packet(.command, [0x03, 0x0C, 0x00])
        let record = BTSnoop.Record(packet: reset, received: false, cumulativeDrops: 7, timestamp: 0x0102_0304_0506_0708)
        let bytes = record.encode()
        #expect(bytes == [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8, 0x01, 0x03, 0x0C, 0x00])
        let decoded = try #require(try BTSnoop.Record.decode(bytes[...]))
        #expect(decoded.size == bytes.count)
        #expect(decoded.record == record)
        #expect(try decoded.record.packet() == reset)
    }

    @Test("direction and kind flags", arguments: [
        (HCIPacketIndicator.command, false, UInt32(2)), (.event, true, 3), (.acl, false, 0), (.acl, true, 1), (.iso, true, 1), (.sco, false, 0),
    ])
    func flags(indicator: HCIPacketIndicator, received: Bool, expected: UInt32) {
        #expect(BTSnoop.Flags(indicator: indicator, received: received).rawValue == expected)
    }

    @Test func timestampsCountMicrosecondsFromYearZero() {
        // The Unix epoch is 0x00DCDDB30F2F8000 µs after midnight, January 1st, year 0.
        #expect(BTSnoop.timestamp(unixMicroseconds: 0) == 0x00DC_DDB3_0F2F_8000)
        #expect(BTSnoop.timestamp(unixMicroseconds: 1_500_000) == 0x00DC_DDB3_0F2F_8000 + 1_500_000)
    }

    @Test func aFileOfRecordsDecodesBackToThePackets() throws {
        let packets = [H4Packet(.command, [0x03, 0x0C, 0x00]), H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),
                       H4Packet(.acl, [0x40, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A])]
        var file = BTSnoop.FileHeader().encode()
        for (index, packet) in packets.enumerated() {
            file += BTSnoop.Record(packet: packet, received: index == 1, cumulativeDrops: 0, timestamp: Int64(index)).encode()
        }
        let decoded = try BTSnoop.decodeFile(file)
        #expect(try decoded.records.map { try $0.packet() } == packets)
        #expect(decoded.records.map(\.flags.rawValue) == [2, 3, 0])
        #expect(decoded.records.map(\.timestamp) == [0, 1, 2])
    }

    @Test func aTruncatedRecordIsATypedError() {
        let bytes = BTSnoop.Record(packet: H4Packet(.event, [0x0E, 0x00]), received: true, cumulativeDrops: 0, timestamp: 1).encode()
        #expect(throws: PacketDecodingError.self) { _ = try BTSnoop.Record.decode(bytes.dropLast()) }
        #expect(throws: PacketDecodingError.self) { _ = try BTSnoop.Record.decode(bytes.prefix(10)) }
    }
}
