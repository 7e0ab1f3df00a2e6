import BluetoothCore
import GATTProfiles
import Testing

@Suite("SFLOAT, number formats and descriptor values")
struct ValueDecodingTests {
    @Test("SFLOAT numbers: sign-extended 12-bit mantissa and 4-bit exponent, printed exactly")
    func sfloatNumbers() throws {
        // 36.6 = 366 × 10^-1: exponent 0xF, mantissa 0x16E → 0xF16E, little-endian 6E F1.
        #expect(try SFloat(bytes: [0x6E, 0xF1]) == .number(mantissa: 366, exponent: -1))
        #expect(try SFloat(bytes: [0x6E, 0xF1]).description == "36.6")
        #expect(abs(try SFloat(bytes: [0x6E, 0xF1]).doubleValue - 36.6) < 1e-12)
        // -5 × 10^-2 = -0.05: mantissa 0xFFB, exponent 0xE → 0xEFFB.
        #expect(try SFloat(bytes: [0xFB, 0xEF]).description == "-0.05")
        // 12 × 10^2 = 1200: exponent 2 → 0x200C.
        #expect(try SFloat(bytes: [0x0C, 0x20]).description == "1200")
        #expect(try SFloat(bytes: [0x00, 0x00]).description == "0")
        // The extremes that are still numbers: 2045 and -2046 with exponents 7 and -8.
        #expect(SFloat(bits: 0x77FD) == .number(mantissa: 2045, exponent: 7))
        #expect(SFloat(bits: 0x8803) == .number(mantissa: -2045, exponent: -8))
        #expect(SFloat(bits: 0x0803).description == "-2045")
    }

    @Test("SFLOAT special values, whatever the exponent bits")
    func sfloatSpecialValues() {
        #expect(SFloat(bits: 0x07FF) == .nan)
        #expect(SFloat(bits: 0x0800) == .nres)
        #expect(SFloat(bits: 0x07FE) == .positiveInfinity)
        #expect(SFloat(bits: 0x0802) == .negativeInfinity)
        #expect(SFloat(bits: 0x0801) == .reserved)
        #expect(SFloat(bits: 0xF7FF) == .nan)
        #expect([SFloat.nan, .nres, .positiveInfinity, .negativeInfinity, .reserved].map(\.description)
                == ["NaN", "NRes", "+INF", "-INF", "reserved"])
        #expect(SFloat.nan.doubleValue.isNaN && SFloat.nres.doubleValue.isNaN && SFloat.reserved.doubleValue.isNaN)
        #expect(SFloat.positiveInfinity.doubleValue == .infinity && SFloat.negativeInfinity.doubleValue == -.infinity)
    }

    @Test("Wrong lengths are typed errors", arguments: [[], [0x01], [0x01, 0x02, 0x03]] as [[UInt8]])
    func sfloatWrongLength(bytes: [UInt8]) {
        #expect(throws: SerdeError.wrongLength(type: "SFLOAT", expected: 2, actual: bytes.count)) { try SFloat(bytes: bytes) }
    }

    @Test("Number formats: widths, signs, little-endian, f32, sfloat")
    func numberFormats() throws {
        #expect(try NumberFormat.i8.format([0xFF]) == "-1")
        #expect(try NumberFormat.u8.format([0xFF]) == "255")
        #expect(try NumberFormat.i16.format([0x00, 0x80]) == "-32768")
        #expect(try NumberFormat.i32.format([0xFE, 0xFF, 0xFF, 0xFF]) == "-2")
        #expect(try NumberFormat.u32.format([0x01, 0x02, 0x03, 0x04]) == "67305985")
        #expect(try NumberFormat.u64.format([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == "18446744073709551615")
        #expect(try NumberFormat.u64.format([0x01, 0, 0, 0, 0, 0, 0, 0x01]) == "72057594037927937")
        #expect(try NumberFormat.f32.format([0x00, 0x00, 0xC0, 0x3F]) == "1.5")
        #expect(try NumberFormat.f32.format([0x00, 0x00, 0xC0, 0x7F]) == "nan")
        #expect(try NumberFormat.sfloat.format([0x6E, 0xF1]) == "36.6")
        #expect(try NumberFormat.sfloat.format([0xFF, 0x07]) == "NaN")
        for format in NumberFormat.allCases {
            #expect(throws: SerdeError.wrongLength(type: format.rawValue, expected: format.width, actual: format.width + 1)) {
                try format.format([UInt8](repeating: 0, count: format.width + 1))
            }
            #expect(throws: SerdeError.self) { try format.format([]) }
            #expect(!format.summary.isEmpty)
        }
    }

    @Test("Descriptor values: User Description text, Presentation Format fields, CCCD bits, others as octets")
    func descriptorValues() throws {
        #expect(try DescriptorValue(uuid: "2901", bytes: Array("Battery level".utf8)) == .userDescription("Battery level"))
        #expect(try DescriptorValue(uuid: "2901", bytes: Array("Battery level".utf8)).description == "\"Battery level\"")
        let format = try DescriptorValue(uuid: "2904", bytes: [0x04, 0x00, 0xAD, 0x27, 0x01, 0x00, 0x00])
        #expect(format.description == "uint8, exponent 0, unit 0x27AD (percentage), namespace Bluetooth SIG, description 0x0")
        let sfloat = try PresentationFormat(bytes: [0x16, 0xFF, 0x2F, 0x27, 0x01, 0x06, 0x01])
        #expect(sfloat.formatName == "medfloat16" && sfloat.exponent == -1 && sfloat.unitName == "degree Celsius" && sfloat.descriptionValue == 0x0106)
        #expect(try DescriptorValue(uuid: "2902", bytes: [0x01, 0x00]) == .clientConfiguration(notifications: true, indications: false))
        #expect(try DescriptorValue(uuid: "2902", bytes: [0x02, 0x00]).description == "notifications off, indications on")
        #expect(try DescriptorValue(uuid: "2906", bytes: [0x01, 0x02]) == .other([0x01, 0x02]))
    }

    @Test("Malformed descriptor values are typed errors")
    func malformedDescriptors() {
        #expect(throws: SerdeError.invalidText(encoding: .utf8)) { try DescriptorValue(uuid: "2901", bytes: [0xFF, 0xFE]) }
        #expect(throws: SerdeError.wrongLength(type: "Characteristic Presentation Format", expected: 7, actual: 6)) {
            try DescriptorValue(uuid: "2904", bytes: [0x04, 0x00, 0xAD, 0x27, 0x01, 0x00])
        }
        #expect(throws: SerdeError.wrongLength(type: "Client Characteristic Configuration", expected: 2, actual: 1)) {
            try DescriptorValue(uuid: "2902", bytes: [0x01])
        }
    }
}
