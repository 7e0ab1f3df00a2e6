@testable import Bluejay
import BluetoothHost
import BluetoothSimulator
import Foundation
import GATTProfiles
import Testing

/// BlueCap's central side: the GATTProfiles serde types read, written and listened to, with
/// no wrapper per type (``Serialized`` bridges them all).
@Suite("Serde values from a central", .timeLimit(.minutes(1)))
struct SerdeCentralTests {
    static let heartRateService = ServiceIdentifier(uuid: "180D")
    static let measurement = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
    static let location = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
    static let batteryLevel = CharacteristicIdentifier(uuid: "2A19", service: ServiceIdentifier(uuid: "180F"))

    @Test("RawDeserializable, BytesDeserializable and Deserializable values read, written and listened to, async and with callbacks")
    func readWriteListen() async throws {
        try await withSimulator { simulator, bluejay in
            var configuration = HeartRateSensor.Configuration(heartRate: .sequence([70, 71]), measurementInterval: nil)
            configuration.batteryLevel = 64
            let sensor = try await simulator.addHeartRateSensor(configuration)
            try await connect(bluejay, to: sensor.device)

            // A RawDeserializable enum and a range-checked RawDeserializable struct.
            #expect(try await bluejay.read(from: Self.location, as: HeartRateProfile.BodySensorLocation.self) == .chest)
            #expect(try await bluejay.read(from: Self.batteryLevel, as: BatteryProfile.Level.self) == BatteryProfile.Level(rawValue: 64))
            try await bluejay.write(to: Self.location, serializing: HeartRateProfile.BodySensorLocation.wrist)
            let read = AwaitableLog<ReadResult<HeartRateProfile.BodySensorLocation>>()
            bluejay.read(from: Self.location, as: HeartRateProfile.BodySensorLocation.self) { read.append($0) }
            #expect(await read.wait(forCount: 1) == [.success(.wrist)])
            // A plain Deserializable number.
            #expect(try await bluejay.read(from: Self.batteryLevel, as: UInt8.self) == 64)

            // A BytesDeserializable measurement, listened to async and with a callback (shared).
            let values = try await bluejay.listen(to: Self.measurement, as: HeartRateProfile.Measurement.self, multipleListenOption: .shared)
            let called = AwaitableLog<UInt16>()
            bluejay.listen(to: Self.measurement, as: HeartRateProfile.Measurement.self) { result in
                if case let .success(measurement) = result { called.append(measurement.heartRate) }
            }
            try await waitUntil("subscribed") { await !sensor.device.subscribers(of: "2A37").isEmpty }
            _ = try await sensor.sendMeasurement()
            var iterator = values.makeAsyncIterator()
            #expect(try await iterator.next()?.heartRate == 70)
            #expect(await called.wait(forCount: 1) == [70])
            try await bluejay.endListen(to: Self.measurement)
            try await bluejay.disconnect()
        }
    }

    @Test("Bytes that do not make the serde value fail with deserializationFailed, naming the SerdeError")
    func badBytes() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.add(SimulatedPeripheral(name: "Odd", services: [
                SimulatedService(uuid: "FFE0", characteristics: [SimulatedCharacteristic(uuid: "FFE1", properties: [.read], value: [9])]),
            ]))
            let odd = CharacteristicIdentifier(uuid: "FFE1", service: ServiceIdentifier(uuid: "FFE0"))
            try await connect(bluejay, to: device)
            // One octet is not a UInt16.
            do {
                _ = try await bluejay.read(from: odd, as: UInt16.self)
                Issue.record("a one-octet value made a UInt16")
            } catch let BluejayError.deserializationFailed(type, data, reason) {
                #expect(type.contains("UInt16") && data == Data([9]) && reason.contains("2"), "\(type) \(reason)")
            }
            // 9 is no body sensor location.
            do {
                _ = try await bluejay.read(from: odd, as: HeartRateProfile.BodySensorLocation.self)
                Issue.record("9 made a body sensor location")
            } catch let BluejayError.deserializationFailed(_, data, reason) {
                #expect(data == Data([9]) && reason.contains("9"), "\(reason)")
            }
            try await bluejay.disconnect()
        }
    }

    @Test("Serialized is a Transmittable and a Receivable for any serde value, in packets too")
    func serializedBridge() throws {
        let packet = Bluejay.combine(sendables: [UInt8(0xAA), Serialized(HeartRateProfile.BodySensorLocation.finger), Serialized(UInt16(0x0102))])
        #expect(packet == Data([0xAA, 3, 0x02, 0x01]))
        let measurement = try Serialized<HeartRateProfile.Measurement>(bluetoothData: Data([0x00, 72]))
        #expect(measurement.value.heartRate == 72)
        #expect(throws: SerdeError.self) { try Serialized<BatteryProfile.Level>(bluetoothData: Data([101])) }
    }
}
