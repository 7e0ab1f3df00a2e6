import BluetoothCore
import Testing

/// ``ByteReader/uint16(in:at:)``: the receive path's in-place little-endian read.
@Suite(.timeLimit(.minutes(1))) struct FixedOffsetReadTests {
    @Test func readsWhatTheWriterWrote() {
        let values: [UInt16] = [0x0000, 0x0001, 0x00FF, 0x0100, 0x1234, 0xABCD, 0xFF00, 0xFFFF]
        var writer = ByteWriter()
        writer.write(UInt8(0xEE))
        for value in values { writer.write(value) }
        let bytes = writer.bytes[...]
        for (index, value) in values.enumerated() {
            #expect(ByteReader.uint16(in: bytes, at: 1 + 2 * index) == value)
        }
        // Any offset, not just field boundaries: 0xEE then 0x00 (the low byte of 0x0000).
        #expect(ByteReader.uint16(in: bytes, at: 0) == 0x00EE)
    }

    @Test func agreesWithReadUInt16() throws {
        let bytes: [UInt8] = [0x34, 0x12, 0x78, 0x56, 0x9A]
        var reader = ByteReader(bytes, context: "test")
        #expect(try reader.readUInt16() == ByteReader.uint16(in: bytes[...], at: 0))
        #expect(try reader.readUInt16() == ByteReader.uint16(in: bytes[...], at: 2))
        #expect(ByteReader.uint16(in: bytes[...], at: 4) == nil)
        #expect(throws: PacketDecodingError.truncated(context: "test", needed: 2, available: 1)) { try reader.readUInt16() }
        // A failed read consumes nothing.
        #expect(reader.remainingCount == 1)
    }

    @Test func outOfRangeIsNil() {
        let bytes: [UInt8] = [0x01, 0x02, 0x03]
        #expect(ByteReader.uint16(in: bytes[...], at: 1) == 0x0302)
        #expect(ByteReader.uint16(in: bytes[...], at: 2) == nil)
        #expect(ByteReader.uint16(in: bytes[...], at: 3) == nil)
        #expect(ByteReader.uint16(in: bytes[...], at: -1) == nil)
        #expect(ByteReader.uint16(in: bytes[...], at: .max) == nil)
        #expect(ByteReader.uint16(in: bytes[...], at: .min) == nil)
        #expect(ByteReader.uint16(in: [], at: 0) == nil)
        #expect(ByteReader.uint16(in: [0x01], at: 0) == nil)
    }

    @Test func offsetsCountFromTheSlicesStart() throws {
        let bytes: [UInt8] = [0xAA, 0xBB, 0x34, 0x12, 0x78, 0x56, 0xCC]
        let slice = bytes[2..<6]
        #expect(slice.startIndex == 2)
        #expect(ByteReader.uint16(in: slice, at: 0) == 0x1234)
        #expect(ByteReader.uint16(in: slice, at: 2) == 0x5678)
        // The bytes around the slice are not part of it.
        #expect(ByteReader.uint16(in: slice, at: 3) == nil)
        #expect(ByteReader.uint16(in: slice, at: -1) == nil)
        #expect(ByteReader.uint16(in: bytes[6...], at: 0) == nil)
        // A reader over a slice with a non-zero start reads the same.
        var reader = ByteReader(slice, context: "slice")
        #expect(try reader.readUInt16() == 0x1234)
        #expect(try reader.readUInt16() == 0x5678)
        #expect(reader.isAtEnd)
    }
}
