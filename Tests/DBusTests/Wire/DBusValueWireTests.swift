import BluetoothCore
@testable import DBus
import Testing

/// Every type in both byte orders, with bytes worked out by hand from the D-Bus Specification's
/// "Marshaling (Wire Format)" table: each value at offset 0 of a message, so the alignment seen
/// is the one from the message's start.
@Suite("D-Bus values on the wire")
struct DBusValueWireTests {
    struct Vector: CustomTestStringConvertible, Sendable {
        var value: DBusValue
        var little: String
        var big: String
        var testDescription: String { "\(value.type) \(value)" }
    }

    static let vectors: [Vector] = [
        Vector(value: .byte(0x2A), little: "2a", big: "2a"),
        Vector(value: .boolean(true), little: "01000000", big: "00000001"),
        Vector(value: .boolean(false), little: "00000000", big: "00000000"),
        Vector(value: .int16(-2), little: "feff", big: "fffe"),
        Vector(value: .uint16(0x1234), little: "3412", big: "1234"),
        Vector(value: .int32(-2), little: "feffffff", big: "fffffffe"),
        Vector(value: .uint32(0x1234_5678), little: "78563412", big: "12345678"),
        Vector(value: .int64(-2), little: "feffffffffffffff", big: "fffffffffffffffe"),
        Vector(value: .uint64(0x0102_0304_0506_0708), little: "0807060504030201", big: "0102030405060708"),
        // 1.5 is 0x3FF8000000000000 in IEEE 754.
        Vector(value: .double(1.5), little: "000000000000f83f", big: "3ff8000000000000"),
        // Length 3 (bytes of UTF-8, not characters), the bytes, a nul.
        Vector(value: .string("hé"), little: "03000000 68c3a9 00", big: "00000003 68c3a9 00"),
        Vector(value: .string(""), little: "00000000 00", big: "00000000 00"),
        Vector(value: .objectPath(.root), little: "01000000 2f 00", big: "00000001 2f 00"),
        // A one-byte length, the signature, a nul: no alignment.
        Vector(value: .signature(DBusSignature.empty), little: "00 00", big: "00 00"),
        // An empty array of 8-byte elements still pads to 8 after its length, which counts no padding.
        Vector(value: .array(of: .uint64, []), little: "00000000 00000000", big: "00000000 00000000"),
        Vector(value: .array(of: .uint64, [.uint64(1)]), little: "08000000 00000000 0100000000000000", big: "00000008 00000000 0000000000000001"),
        Vector(value: .bytes([1, 2, 3]), little: "03000000 010203", big: "00000003 010203"),
        Vector(value: .array(of: .int16, [.int16(1), .int16(-1)]), little: "04000000 0100 ffff", big: "00000004 0001 ffff"),
        // A struct aligns to 8; its fields follow their own alignment.
        Vector(value: .struct([.byte(1), .uint32(2)]), little: "01 000000 02000000", big: "01 000000 00000002"),
        // a{sv} {"k": <u 1>}: length 16, padding to 8, "k", signature "u", padding to 4, 1.
        Vector(
            value: DBusValue(["k": DBusValue.uint32(1)]),
            little: "10000000 00000000 01000000 6b00 017500 000000 01000000",
            big: "00000010 00000000 00000001 6b00 017500 000000 00000001"
        ),
        // <as ["x"]>: signature "as", then the array at offset 4.
        Vector(value: .variant(.array(of: .string, [.string("x")])), little: "02617300 06000000 01000000 7800", big: "02617300 00000006 00000001 7800"),
        // A variant in a variant: <<y 7>>.
        Vector(value: .variant(.variant(.byte(7))), little: "017600 017900 07", big: "017600 017900 07"),
    ]

    @Test("encodes as the specification says", arguments: vectors)
    func encodes(_ vector: Vector) throws {
        for (order, text) in [(DBusByteOrder.little, vector.little), (.big, vector.big)] {
            var writer = DBusWireWriter(byteOrder: order)
            try writer.value(vector.value, as: vector.value.type)
            #expect(Hex.encode(writer.bytes) == Hex.encode(try hex(text)), "\(order)")
        }
    }

    @Test("decodes in both byte orders", arguments: vectors)
    func decodes(_ vector: Vector) throws {
        for (order, text) in [(DBusByteOrder.little, vector.little), (.big, vector.big)] {
            var reader = DBusWireReader(bytes: try hex(text)[...], byteOrder: order)
            #expect(try reader.value(of: vector.value.type) == vector.value, "\(order)")
            #expect(reader.remaining == 0)
        }
    }

    @Test func aFileDescriptorIsAnIndexIntoTheDescriptorsSentWithTheMessage() throws {
        let first = DBusFileDescriptor(taking: -1)
        let second = DBusFileDescriptor(taking: -1)
        var writer = DBusWireWriter(byteOrder: .little)
        let value = DBusValue.struct([.unixFD(first), .unixFD(second), .unixFD(first)])
        try writer.value(value, as: value.type)
        #expect(writer.bytes == (try hex("00000000 01000000 00000000")))
        #expect(writer.fileDescriptors == [first, second])

        var reader = DBusWireReader(bytes: writer.bytes[...], byteOrder: .little, fileDescriptors: [first, second])
        #expect(try reader.value(of: value.type) == value)

        var short = DBusWireReader(bytes: writer.bytes[...], byteOrder: .little, fileDescriptors: [first])
        #expect(throws: DBusWireError.fileDescriptorIndex(1, count: 1)) { try short.value(of: value.type) }
    }

    @Test func aValueOfTheWrongTypeIsNotEncoded() {
        var writer = DBusWireWriter(byteOrder: .little)
        #expect(throws: DBusWireError.typeMismatch(expected: "u", got: "s")) {
            try writer.value(.array(of: .uint32, [.string("x")]), as: .array(.uint32))
        }
        #expect(throws: DBusWireError.self) { try writer.value(.bytes([1]), as: .array(.int32)) }
        let dictionary = DBusValue.dictionary(DBusDictionary(keyType: .string, valueType: .uint32, entries: [.init(key: .uint32(1), value: .uint32(2))]))
        #expect(throws: DBusWireError.self) { try writer.value(dictionary, as: dictionary.type) }
    }

    @Test func aStringWithANulByteIsNotEncoded() {
        var writer = DBusWireWriter(byteOrder: .little)
        #expect(throws: DBusWireError.self) { try writer.value(.string("a\u{0}b"), as: .string) }
    }

    @Test func variantsNestAtMost64Deep() throws {
        var value = DBusValue.byte(1)
        for _ in 0..<64 { value = .variant(value) }
        var writer = DBusWireWriter(byteOrder: .little)
        try writer.value(value, as: .variant)
        var reader = DBusWireReader(bytes: writer.bytes[...], byteOrder: .little)
        #expect(try reader.value(of: .variant) == value)

        // One more level: refused by the encoder, and by the decoder when a peer sends it.
        var tooDeep = DBusWireWriter(byteOrder: .little)
        #expect(throws: DBusWireError.nestedTooDeeply(limit: 64)) { try tooDeep.value(.variant(value), as: .variant) }
        let bytes = try hex("017600") + writer.bytes
        var deepReader = DBusWireReader(bytes: bytes[...], byteOrder: .little)
        #expect(throws: DBusWireError.nestedTooDeeply(limit: 64)) { try deepReader.value(of: .variant) }
    }

    @Test func typedAccessorsAndSwiftConversions() throws {
        let properties = DBusValue(["Name": DBusValue.string("sensor"), "RSSI": .int16(-60), "UUIDs": DBusValue(["180d"])])
        #expect(properties.type == .array(.dictEntry(key: .string, value: .variant)))
        #expect(properties["Name"]?.stringValue == "sensor")
        #expect(properties["RSSI"]?.integerValue == -60)
        #expect(properties["UUIDs"]?.arrayValue == [.string("180d")])
        #expect(properties["Missing"] == nil)
        let back = try #require([String: DBusValue](dbusValue: properties))
        #expect(back["RSSI"] == .int16(-60))
        #expect([UInt8](dbusValue: .bytes([1, 2])) == [1, 2])
        #expect([UInt32](dbusValue: .bytes([1, 2])) == nil)
        #expect(DBusValue.variant(.variant(.uint16(3))).unwrapped == .uint16(3))
        #expect(DBusValue([[1, 2], [3]] as [[Int32]]).type == .array(.array(.int32)))
        let index = 7
        let interpolated: DBusValue = "sensor \(index)"
        #expect(interpolated == .string("sensor 7"))
    }

    @Test func anEmptyArrayKeepsItsElementType() {
        // An empty [String] casts to [UInt8] in Swift; it must still be an "as", not an "ay".
        #expect(DBusValue([String]()).type == .array(.string))
        #expect(DBusValue([Int16]()).type == .array(.int16))
        #expect(DBusValue([UInt8]()).type == .array(.byte))
        #expect([String](dbusValue: .bytes([])) == nil)
        #expect([String](dbusValue: .array(of: .string, [])) == [])
    }
}
