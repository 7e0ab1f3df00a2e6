@testable import BluetoothSimulator
import Testing

/// The plain values under the simulator: failure plans, chunk sizes, heart rates, encodings.
@Suite("Simulator values", .timeLimit(.minutes(1)))
struct ValueTests {
    @Test("A failure plan hands out failures in order, per characteristic and kind, and uses them up")
    func failurePlan() {
        var plan = FailurePlan()
        plan.add(.attError(.readNotPermitted), count: 2, characteristic: "2A38", kinds: .read)
        plan.add(.dropLink, count: 1, characteristic: nil, kinds: .write)
        plan.add(.delay(.seconds(1)), count: 0, characteristic: nil, kinds: .all)
        #expect(plan.pendingCount == 3)
        #expect(plan.take(characteristic: "2A19", kind: .read) == nil)
        #expect(plan.take(characteristic: "2A38", kind: .write) == .dropLink)
        #expect(plan.take(characteristic: "2A38", kind: .write) == nil)
        #expect(plan.take(characteristic: "2A38", kind: .read) == .attError(.readNotPermitted))
        #expect(plan.take(characteristic: "2A38", kind: .read) == .attError(.readNotPermitted))
        #expect(plan.take(characteristic: "2A38", kind: .read) == nil)
        #expect(plan.pendingCount == 0)
    }

    @Test("Chunk sizes: maximum, fixed, random within bounds and never above the notification size; repeatable")
    func chunkSizes() {
        let bytes = (0..<100).map { UInt8($0) }
        var maximum = ChunkSizer(.maximum)
        #expect(maximum.split(bytes, maximum: 20).map(\.count) == [20, 20, 20, 20, 20])
        var fixed = ChunkSizer(.fixed(30))
        #expect(fixed.split(bytes, maximum: 20).map(\.count) == [20, 20, 20, 20, 20], "cut to what a notification carries")
        var fixedSmall = ChunkSizer(.fixed(45))
        #expect(fixedSmall.split(bytes, maximum: 244).map(\.count) == [45, 45, 10])
        var random = ChunkSizer(.random(3...9, seed: 11))
        let chunks = random.split(bytes, maximum: 244)
        #expect(chunks.flatMap { $0 } == bytes)
        #expect(chunks.dropLast().allSatisfy { (3...9).contains($0.count) })
        var again = ChunkSizer(.random(3...9, seed: 11))
        #expect(again.split(bytes, maximum: 244).map(\.count) == chunks.map(\.count))
        var empty = ChunkSizer(.fixed(0))
        #expect(empty.split([], maximum: 20).isEmpty)
        #expect(empty.split([1, 2], maximum: 0).map(\.count) == [1, 1], "never a zero-length chunk")
    }

    @Test("Heart rate sources: constant, sequence, counting, a repeatable bounded walk, custom")
    func heartRateSources() {
        func take(_ source: HeartRateSource, _ count: Int) -> [UInt16] {
            var generator = HeartRateGenerator(source)
            return (0..<count).map { _ in generator.next() }
        }
        #expect(take(.constant(72), 3) == [72, 72, 72])
        #expect(take(.sequence([1, 2]), 5) == [1, 2, 1, 2, 1])
        #expect(take(.sequence([]), 2) == [0, 0])
        #expect(take(.counting(from: 65534), 3) == [65534, 65535, 0])
        let walk = take(.wandering(around: 72, seed: 5), 200)
        #expect(walk == take(.wandering(around: 72, seed: 5), 200))
        #expect(walk.allSatisfy { (52...92).contains($0) })
        #expect(zip(walk, walk.dropFirst()).allSatisfy { abs(Int($0) - Int($1)) <= 3 })
        #expect(Set(walk).count > 5)
        #expect(take(.custom { UInt16($0 * 10) }, 3) == [0, 10, 20])
    }

    @Test("Heart Rate Measurement bytes: 8-bit, 16-bit above 255 or on request, contact and energy flags")
    func measurementEncoding() {
        #expect(HeartRateSensor.measurementBytes(heartRate: 72, sensorContact: .notSupported) == [0x00, 72])
        #expect(HeartRateSensor.measurementBytes(heartRate: 72) == [0x06, 72])
        #expect(HeartRateSensor.measurementBytes(heartRate: 300) == [0x07, 0x2C, 0x01])
        #expect(HeartRateSensor.measurementBytes(heartRate: 72, uses16BitFormat: true) == [0x07, 72, 0])
        #expect(HeartRateSensor.measurementBytes(heartRate: 72, uses16BitFormat: true, energyExpended: 0x0102) == [0x0F, 72, 0, 0x02, 0x01])
        let decoded = try? HeartRateProfile.Measurement(bytes: HeartRateSensor.measurementBytes(heartRate: 80, uses16BitFormat: true, energyExpended: 9))
        #expect(decoded?.heartRate == 80 && decoded?.energyExpended == 9 && decoded?.sensorContact == .detected)
    }

    @Test("Declarations: advertising interval units clamped, addresses derived from names, profile characteristics")
    func declarations() {
        var peripheral = SimulatedPeripheral(name: "A", advertisingInterval: .milliseconds(100))
        #expect(peripheral.advertisingIntervalUnits == 160)
        peripheral.advertisingInterval = .milliseconds(1)
        #expect(peripheral.advertisingIntervalUnits == 0x20)
        peripheral.advertisingInterval = .seconds(60)
        #expect(peripheral.advertisingIntervalUnits == 0x4000)
        #expect(SimulatedPeripheral.address(forName: "A") == SimulatedPeripheral.address(forName: "A"))
        #expect(SimulatedPeripheral.address(forName: "A") != SimulatedPeripheral.address(forName: "B"))
        #expect(SimulatedPeripheral.address(forName: "A").bytes.prefix(2) == [0xC0, 0x5E])
        let level = SimulatedCharacteristic(BatteryProfile.Level.self)
        #expect(level.uuid == "2A19" && level.properties == [.read, .notify] && level.value == [100] && level.isReadable && !level.isWritable)
        let location = SimulatedCharacteristic(HeartRateProfile.BodySensorLocation.self, properties: [.read, .write])
        #expect(location.isWritable && location.value == [1])
        let sensor = HeartRateSensor.declaration(.init(serialNumber: "X-1"))
        #expect(sensor.characteristic("2A25")?.value == Array("X-1".utf8))
        #expect(sensor.characteristic("2A37", inService: "180F") == nil)
        #expect(sensor.advertisedServiceUUIDs == ["180D", "180F"])
    }
}
