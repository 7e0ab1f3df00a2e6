import BluetoothCore
import GATTProfiles
import Testing

private enum Enabled: UInt8, RawDeserializable {
    case no = 0
    case yes = 1
    static let uuid = BluetoothUUID("F000AA12-0451-4000-B000-000000000000")
}

private struct Percent: RawDeserializable {
    static let uuid = BluetoothUUID(UInt16(0x2A19))
    let rawValue: UInt8
    init?(rawValue: UInt8) {
        guard rawValue <= 100 else { return nil }
        self.rawValue = rawValue
    }
}

private struct Pair: RawArrayDeserializable {
    static let uuid = BluetoothUUID(UInt16(0xAA13))
    static let size = 2
    let rawValue: [Int16]
    init?(rawValue: [Int16]) {
        guard rawValue.count == 2 else { return nil }
        self.rawValue = rawValue
    }
}

private struct Mixed: RawPairDeserializable {
    static let uuid = BluetoothUUID(UInt16(0xAA30))
    let rawValue1: UInt8
    let rawValue2: Int16
    init?(rawValue1: UInt8, rawValue2: Int16) {
        guard rawValue1 != 0xFF else { return nil }
        self.rawValue1 = rawValue1
        self.rawValue2 = rawValue2
    }
}

private struct MixedArrays: RawArrayPairDeserializable {
    static let uuid = BluetoothUUID(UInt16(0xAA31))
    static let size1 = 2
    static let size2 = 1
    let rawValue1: [UInt8]
    let rawValue2: [Int16]
    init?(rawValue1: [UInt8], rawValue2: [Int16]) {
        guard rawValue1.count == 2, rawValue2.count == 1 else { return nil }
        self.rawValue1 = rawValue1
        self.rawValue2 = rawValue2
    }
}

@Suite("Serde: the raw families", .timeLimit(.minutes(1)))
struct RawDeserializableTests {
    @Test("An enum conforms with its raw type and round-trips; an unknown raw value throws")
    func enums() throws {
        #expect(Enabled.yes.serialize() == [1])
        #expect(try Enabled.deserialize([1]) == .yes)
        #expect(throws: SerdeError.invalidRawValue(type: "Enabled", value: "7")) { try Enabled.deserialize([7]) }
        #expect(throws: SerdeError.wrongLength(type: "UInt8", expected: 1, actual: 2)) { try Enabled.deserialize([1, 0]) }
        #expect(try Serde.deserialize([0], as: Enabled.self) == .no)
    }

    @Test("A struct checks its range")
    func ranges() throws {
        #expect(try Percent.deserialize([100]).rawValue == 100)
        #expect(throws: SerdeError.invalidRawValue(type: "Percent", value: "101")) { try Percent.deserialize([101]) }
    }

    @Test("RawArrayDeserializable: exactly size elements")
    func rawArrays() throws {
        let value = try Pair.deserialize([1, 0, 0xFE, 0xFF])
        #expect(value.rawValue == [1, -2])
        #expect(value.serialize() == [1, 0, 0xFE, 0xFF])
        #expect(Pair.byteCount == 4)
        #expect(throws: SerdeError.wrongLength(type: "Pair", expected: 4, actual: 2)) { try Pair.deserialize([1, 0]) }
        #expect(throws: SerdeError.wrongLength(type: "Pair", expected: 4, actual: 6)) { try Pair.deserialize([1, 0, 2, 0, 3, 0]) }
    }

    @Test("RawPairDeserializable: two values of different types back to back")
    func rawPairs() throws {
        let value = try Mixed.deserialize([7, 0x00, 0x80])
        #expect(value.rawValue1 == 7 && value.rawValue2 == Int16.min)
        #expect(value.serialize() == [7, 0x00, 0x80])
        #expect(throws: SerdeError.wrongLength(type: "Mixed", expected: 3, actual: 2)) { try Mixed.deserialize([7, 0]) }
        #expect(throws: SerdeError.invalidRawValue(type: "Mixed", value: "(255, 0)")) { try Mixed.deserialize([0xFF, 0, 0]) }
    }

    @Test("RawArrayPairDeserializable: two arrays back to back")
    func rawArrayPairs() throws {
        let value = try MixedArrays.deserialize([1, 2, 0xFF, 0x7F])
        #expect(value.rawValue1 == [1, 2] && value.rawValue2 == [Int16.max])
        #expect(try Serde.serialize(Serde.deserialize([1, 2, 0xFF, 0x7F], as: MixedArrays.self)) == [1, 2, 0xFF, 0x7F])
        #expect(throws: SerdeError.wrongLength(type: "MixedArrays", expected: 4, actual: 5)) { try MixedArrays.deserialize([1, 2, 3, 4, 5]) }
    }
}
