@testable import Bluejay
import Foundation
import Testing

/// The README's packet with a nested Transmittable.
struct WriteRequest: Transmittable {
    var handle: UInt16
    var payload: any Transmittable

    func toBluetoothData() -> Data {
        let body = payload.toBluetoothData()
        return Bluejay.combine(sendables: [UInt8(0x3A), UInt8(3 + body.count), UInt8(0x02), handle.bigEndian, payload, DataPadding(2)])
    }
}

@Suite("Receivable and Transmittable", .timeLimit(.minutes(1)))
struct SerializationTests {
    @Test("Fixed-width integers travel little-endian and round-trip")
    func integers() throws {
        #expect(UInt16(0x1234).toBluetoothData() == Data([0x34, 0x12]))
        #expect(Int32(-2).toBluetoothData() == Data([0xFE, 0xFF, 0xFF, 0xFF]))
        #expect(try UInt32(bluetoothData: Data([0x78, 0x56, 0x34, 0x12])) == 0x1234_5678)
        #expect(try Int8(bluetoothData: Data([0xFF])) == -1)
        #expect(try Int64(bluetoothData: Int64.min.toBluetoothData()) == .min)
        #expect(try UInt64(bluetoothData: UInt64.max.toBluetoothData()) == .max)
        #expect(try Int16(bluetoothData: Int16(-300).toBluetoothData()) == -300)
    }

    @Test("An integer needs exactly its width; the error carries the bytes")
    func wrongWidth() {
        #expect(throws: BluejayError.deserializationFailed(type: "UInt16", data: Data([1]), reason: "expected 2 bytes, got 1")) {
            try UInt16(bluetoothData: Data([1]))
        }
    }

    @Test("Data and UTF-8 strings")
    func dataAndStrings() throws {
        #expect(try String(bluetoothData: Data("Bluejay é".utf8)) == "Bluejay é")
        #expect("SN-0001".toBluetoothData() == Data("SN-0001".utf8))
        #expect(try Data(bluetoothData: Data([1, 2])) == Data([1, 2]))
        #expect(throws: BluejayError.self) { try String(bluetoothData: Data([0xFF, 0xFE])) }
    }

    @Test("extract is bounds-checked and throws a typed error instead of trapping")
    func extractBounds() throws {
        let data = Data([0x01, 0x02, 0x03])
        #expect(try data.extract(start: 1, length: 2) as UInt16 == 0x0302)
        #expect(throws: BluejayError.dataOutOfBounds(start: 2, length: 2, count: 3)) { try data.extract(start: 2, length: 2) as UInt16 }
        #expect(throws: BluejayError.dataOutOfBounds(start: -1, length: 1, count: 3)) { try data.extract(start: -1, length: 1) as UInt8 }
        #expect(throws: BluejayError.dataOutOfBounds(start: 1, length: Int.max, count: 3)) { try data.extract(start: 1, length: Int.max) as Data }
        #expect(try data.extract(start: 3, length: 0) as Data == Data())
    }

    @Test("extract counts from the first byte of a slice, whatever its indices")
    func extractSlice() throws {
        let slice = Data([0xAA, 0xBB, 0x10, 0x20])[2...]
        #expect(slice.startIndex == 2)
        #expect(try slice.extract(start: 0, length: 1) as UInt8 == 0x10)
        #expect(try slice.extract(start: 0, length: 2) as UInt16 == 0x2010)
    }

    @Test("The heart rate measurement of the README, 8- and 16-bit")
    func heartRate() throws {
        let eight = try HeartRateMeasurement(bluetoothData: Data([0x00, 72]))
        #expect(eight.measurement == 72 && eight.isMeasurementIn8bits)
        let sixteen = try HeartRateMeasurement(bluetoothData: Data([0x01, 0x2C, 0x01]))
        #expect(sixteen.measurement == 300 && !sixteen.isMeasurementIn8bits)
        #expect(throws: BluejayError.self) { try HeartRateMeasurement(bluetoothData: Data([0x01, 0x2C])) }
    }

    @Test("combine keeps the order of nested values; DataPadding adds zeros")
    func combine() {
        let request = WriteRequest(handle: 0x0102, payload: UInt16(0xBEEF))
        #expect(request.toBluetoothData() == Data([0x3A, 5, 0x02, 0x01, 0x02, 0xEF, 0xBE, 0, 0]))
        #expect(DataPadding(-3).toBluetoothData().isEmpty)
        #expect(Bluejay.combine(sendables: []).isEmpty)
    }

    @Test("A decoding failure becomes deserializationFailed with the bytes received")
    func decodingFailure() {
        let result: Result<HeartRateMeasurement, BluejayError> = Result<Data, BluejayError>.success(Data([0x01])).decoded()
        guard case let .failure(.deserializationFailed(type, data, reason)) = result else {
            Issue.record("expected deserializationFailed, got \(result)")
            return
        }
        #expect(type == "HeartRateMeasurement")
        #expect(data == Data([0x01]))
        #expect(reason.contains("cannot extract 2 bytes at offset 1"))
    }
}
