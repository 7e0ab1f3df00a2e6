import GATTProfiles
import Testing

@Suite("Serde: fixed-width numbers", .timeLimit(.minutes(1)))
struct DeserializableTests {
    @Test("Integers are little-endian and round-trip at their extremes")
    func integers() throws {
        #expect(UInt16(0x1234).serialize() == [0x34, 0x12])
        #expect(Int16(-2).serialize() == [0xFE, 0xFF])
        #expect(UInt32(0xDEADBEEF).serialize() == [0xEF, 0xBE, 0xAD, 0xDE])
        #expect(try Int32.deserialize([0xFF, 0xFF, 0xFF, 0x7F]) == .max)
        #expect(try Int64.deserialize([0, 0, 0, 0, 0, 0, 0, 0x80]) == .min)
        #expect(try UInt64.deserialize(UInt64.max.serialize()) == .max)
        #expect(try Int8.deserialize([0x80]) == -128)
        #expect(try UInt8.deserialize([0xFF]) == 255)
        #expect(UInt8.size == 1 && Int16.size == 2 && UInt32.size == 4 && Int64.size == 8)
    }

    @Test("Floats are IEEE 754 little-endian")
    func floats() throws {
        #expect(Float32(1.5).serialize() == [0x00, 0x00, 0xC0, 0x3F])
        #expect(try Float32.deserialize([0x00, 0x00, 0xC0, 0x3F]) == 1.5)
        #expect(try Float64.deserialize(Float64(-0.25).serialize()) == -0.25)
        #expect(Float64.size == 8)
        #expect(Float32(stringValue: " 2.5 ") == 2.5)
    }

    @Test("Decoding checks the length and says what it expected")
    func lengthChecks() {
        #expect(throws: SerdeError.wrongLength(type: "UInt16", expected: 2, actual: 3)) { try UInt16.deserialize([1, 2, 3]) }
        #expect(throws: SerdeError.wrongLength(type: "UInt32", expected: 4, actual: 0)) { try UInt32.deserialize([]) }
        #expect(throws: SerdeError.wrongLength(type: "Float", expected: 4, actual: 2)) { try Float32.deserialize([1, 2]) }
        #expect(SerdeError.wrongLength(type: "UInt16", expected: 2, actual: 3).description == "UInt16 takes 2 octets, not 3")
    }

    @Test("Reading at an offset checks there is room, also for negative offsets")
    func offsets() throws {
        #expect(try UInt16.deserialize([9, 0x34, 0x12, 9], at: 1) == 0x1234)
        #expect(throws: SerdeError.tooShort(type: "UInt16", offset: 3, needed: 2, available: 4)) { try UInt16.deserialize([1, 2, 3, 4], at: 3) }
        #expect(throws: SerdeError.self) { try UInt16.deserialize([1, 2, 3, 4], at: -1) }
        #expect(throws: SerdeError.self) { try UInt8.deserialize([1], at: 5) }
    }

    @Test("Arrays need a whole number of elements")
    func arrays() throws {
        #expect(try Int16.deserializeArray([1, 0, 0xFF, 0xFF]) == [1, -1])
        #expect(try UInt32.deserializeArray([]) == [])
        #expect(throws: SerdeError.notAMultiple(type: "UInt16", elementSize: 2, actual: 3)) { try UInt16.deserializeArray([1, 2, 3]) }
        #expect(UInt16.serialize([1, 2]) == [1, 0, 2, 0])
    }

    @Test("Numbers convert to and from text")
    func text() {
        #expect(UInt8(stringValue: "200") == 200)
        #expect(UInt8(stringValue: "300") == nil)
        #expect(Int16(stringValue: "-7") == -7)
        #expect(Int16(stringValue: "x") == nil)
        #expect(UInt32(7).stringValue == "7")
    }

    @Test("Serde's functions work for every family")
    func serdeNamespace() throws {
        #expect(Serde.serialize(UInt16(31)) == [31, 0])
        let value: UInt16 = try Serde.deserialize([31, 0])
        #expect(value == 31)
        #expect(try Serde.deserialize([5], as: Int8.self) == 5)
        #expect(try Serde.serialize("Bluejay") == Array("Bluejay".utf8))
        #expect(try Serde.deserialize([0x42, 0x4A], encoding: .utf8) == "BJ")
    }
}
