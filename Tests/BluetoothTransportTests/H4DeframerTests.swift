import BluetoothCore
import BluetoothTransport
import Testing

@Suite("H4 framing", .timeLimit(.minutes(1)))
struct H4DeframerTests {
    /// HCI_Reset (Core 6.0, Vol 4, Part E, 7.3.2): opcode 0x0C03, no parameters.
    static let reset = H4Packet(.command, [0x03, 0x0C, 0x00])
    /// Command Complete for HCI_Reset: 1 credit, opcode 0x0C03, status success.
    static let resetComplete = H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
    /// ACL on handle 0x0040, first automatically-flushable fragment, 0x0105 bytes: a length
    /// above 255 checks that both octets of the 2-octet length are used.
    static let longACL = H4Packet(.acl, [0x40, 0x20, 0x05, 0x01] + (0..<0x105).map { UInt8(truncatingIfNeeded: $0) })
    static let sco = H4Packet(.sco, [0x01, 0x00, 0x02, 0xAA, 0xBB])

    static let stream = [reset, resetComplete, longACL, sco]
    static let streamBytes = stream.flatMap(\.framed)

    @Test func framedPutsTheIndicatorFirst() {
        #expect(Self.reset.framed == [0x01, 0x03, 0x0C, 0x00])
        #expect(Self.resetComplete.framed == [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
    }

    @Test func severalPacketsInOneChunk() throws {
        var deframer = H4Deframer()
        #expect(try deframer.append(Self.streamBytes) == Self.stream)
        #expect(deframer.bufferedByteCount == 0)
    }

    @Test func streamSplitAtEveryByteBoundary() throws {
        for split in 0...Self.streamBytes.count {
            var deframer = H4Deframer()
            let first = try deframer.append(Self.streamBytes[..<split])
            let second = try deframer.append(Self.streamBytes[split...])
            #expect(first + second == Self.stream, "split at \(split)")
            #expect(deframer.bufferedByteCount == 0, "split at \(split)")
        }
    }

    @Test func streamSplitAtEveryPairOfBoundaries() throws {
        // Three chunks: exercises a header split across reads and a payload split in two.
        let bytes = [Self.reset, Self.resetComplete, Self.sco].flatMap(\.framed)
        for first in 0...bytes.count {
            for second in first...bytes.count {
                var deframer = H4Deframer()
                var packets = try deframer.append(bytes[..<first])
                packets += try deframer.append(bytes[first..<second])
                packets += try deframer.append(bytes[second...])
                #expect(packets == [Self.reset, Self.resetComplete, Self.sco], "splits at \(first), \(second)")
            }
        }
    }

    @Test func oneByteAtATime() throws {
        var deframer = H4Deframer()
        var packets: [H4Packet] = []
        // Offsets just past the end of each packet.
        var ends: Set<Int> = []
        var end = 0
        for packet in Self.stream {
            end += packet.framed.count
            ends.insert(end)
        }
        for (offset, byte) in Self.streamBytes.enumerated() {
            let completed = try deframer.append([byte])
            packets += completed
            // A packet completes exactly on its last byte, and not before.
            #expect(completed.count == (ends.contains(offset + 1) ? 1 : 0), "at \(offset)")
            #expect((deframer.bufferedByteCount == 0) == ends.contains(offset + 1), "at \(offset)")
        }
        #expect(packets == Self.stream)
    }

    @Test func incompletePacketStaysBuffered() throws {
        var deframer = H4Deframer()
        #expect(try deframer.append(Self.longACL.framed.dropLast()) == [])
        #expect(deframer.bufferedByteCount == Self.longACL.framed.count - 1)
        #expect(try deframer.append([Self.longACL.framed.last ?? 0]) == [Self.longACL])
    }

    @Test func aclLengthIsTwoOctetsLittleEndian() throws {
        var deframer = H4Deframer()
        // Length 0x0102 = 258: if only the low octet were read the packet would end after 2 bytes.
        let payload = [UInt8](repeating: 0x5A, count: 0x0102)
        let packets = try deframer.append([0x02, 0x01, 0x00, 0x02, 0x01] + payload)
        #expect(packets == [H4Packet(.acl, [0x01, 0x00, 0x02, 0x01] + payload)])
    }

    @Test func isoLengthUsesOnly14Bits() throws {
        // ISO_Data_Load_Length is 14 bits; the top 2 bits of the field are RFU
        // (Core 6.0, Vol 4, Part E, 5.4.5). Field 0xC003 means 3 bytes of data.
        var deframer = H4Deframer()
        let iso = H4Packet(.iso, [0x01, 0x60, 0x03, 0xC0, 0xAA, 0xBB, 0xCC])
        #expect(try deframer.append(iso.framed + Self.reset.framed) == [iso, Self.reset])
        #expect(deframer.bufferedByteCount == 0)
    }

    @Test func unknownIndicatorThrowsATypedError() {
        var deframer = H4Deframer()
        #expect(throws: PacketDecodingError.unknownOpcode(context: "H4 packet indicator", opcode: 0x07)) {
            _ = try deframer.append([0x07, 0x00, 0x00])
        }
    }

    @Test func unknownIndicatorAfterAValidPacketThrows() {
        var deframer = H4Deframer()
        #expect(throws: PacketDecodingError.self) {
            _ = try deframer.append(Self.reset.framed + [0xFF])
        }
    }

    @Test func framedInitDecodesExactlyOnePacket() throws {
        #expect(try H4Packet(framed: Self.resetComplete.framed) == Self.resetComplete)
        #expect(try H4Packet(framed: Self.longACL.framed) == Self.longACL)
    }

    @Test(arguments: [
        [],
        [0x04],
        [0x04, 0x0E],
        [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C],
    ] as [[UInt8]])
    func framedInitRejectsTooFewBytes(bytes: [UInt8]) {
        #expect(throws: PacketDecodingError.self) { try H4Packet(framed: bytes) }
    }

    @Test func framedInitRejectsTooManyBytes() {
        #expect(throws: PacketDecodingError.self) { try H4Packet(framed: Self.resetComplete.framed + [0x00]) }
        #expect(throws: PacketDecodingError.self) { try H4Packet(framed: Self.reset.framed + Self.reset.framed) }
    }

    @Test func framedInitRejectsUnknownIndicator() {
        #expect(throws: PacketDecodingError.unknownOpcode(context: "H4 packet indicator", opcode: 0x07)) {
            try H4Packet(framed: [0x07, 0x00])
        }
    }
}
