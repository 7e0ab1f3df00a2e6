import BluetoothCore
import GATTProfiles
import Testing

@Suite("Shipped profiles", .timeLimit(.minutes(1)))
struct ShippedProfileTests {
    @Test("The shipped services have the SIG's UUIDs and names")
    func uuidsAndNames() {
        let registry = ProfileRegistry.standard
        let expected: [(UInt16, String)] = [(0x180D, "Heart Rate"), (0x180F, "Battery"), (0x180A, "Device Information"), (0x1805, "Current Time")]
        for (uuid, name) in expected {
            #expect(registry.service(BluetoothUUID(uuid))?.name == name)
        }
        #expect(registry.services.count == 5)
        let heartRate = HeartRateProfile.service
        #expect(heartRate.characteristics.map(\.uuid) == [0x2A37, 0x2A38, 0x2A39].map { BluetoothUUID(UInt16($0)) })
        #expect(DeviceInformationProfile.service.characteristics.count == 8)
        #expect(TISensorTag.AccelerometerService.profile.uuid.uuidString == "F000AA10-0451-4000-B000-000000000000")
    }

    @Test("Heart Rate Measurement: 8- and 16-bit rates, contact, energy and RR intervals")
    func heartRateMeasurement() throws {
        let simple = try HeartRateProfile.Measurement(bytes: [0x00, 72])
        #expect(simple == HeartRateProfile.Measurement(heartRate: 72))
        let full = try HeartRateProfile.Measurement(bytes: [0x1F, 0x2C, 0x01, 0x10, 0x00, 0x00, 0x04, 0x00, 0x02])
        #expect(full.heartRate == 300 && full.sensorContact == .detected && full.energyExpended == 16)
        #expect(full.rrIntervals == [1024, 512])
        #expect(full.serialize() == [0x1F, 0x2C, 0x01, 0x10, 0x00, 0x00, 0x04, 0x00, 0x02])
        #expect(full.stringValue["Heart Rate"] == "300")
        #expect(throws: SerdeError.self) { try HeartRateProfile.Measurement(bytes: []) }
        #expect(throws: SerdeError.self) { try HeartRateProfile.Measurement(bytes: [0x01, 0x48]) }
        #expect(throws: SerdeError.self) { try HeartRateProfile.Measurement(bytes: [0x10, 72, 1]) }
        #expect(throws: SerdeError.self) { try HeartRateProfile.Measurement(bytes: [0x00, 72, 9]) }
        let profile = try #require(ProfileRegistry.standard.characteristic(HeartRateProfile.Measurement.uuid))
        #expect(profile.bytes(stringValue: ["Heart Rate": "80"]) == [0x00, 80])
    }

    @Test("Body Sensor Location and the control point are enumerations with text")
    func heartRateEnums() throws {
        #expect(try HeartRateProfile.BodySensorLocation.deserialize([2]) == .wrist)
        #expect(throws: SerdeError.self) { try HeartRateProfile.BodySensorLocation.deserialize([7]) }
        #expect(HeartRateProfile.BodySensorLocation.earLobe.stringValue == ["Body Sensor Location": "Ear Lobe"])
        #expect(HeartRateProfile.BodySensorLocation(stringValue: ["Body Sensor Location": "Foot"]) == .foot)
        #expect(HeartRateProfile.ControlPoint.resetEnergyExpended.serialize() == [1])
    }

    @Test("Battery Level is 0 to 100")
    func batteryLevel() throws {
        #expect(try BatteryProfile.Level.deserialize([42]).rawValue == 42)
        #expect(throws: SerdeError.invalidRawValue(type: "Level", value: "101")) { try BatteryProfile.Level.deserialize([101]) }
        #expect(BatteryProfile.Level(stringValue: ["Battery Level": "100"])?.serialize() == [100])
    }

    @Test("Device Information: strings, System ID and PnP ID")
    func deviceInformation() throws {
        let service = DeviceInformationProfile.service
        let manufacturer = try #require(service.characteristic(BluetoothUUID(UInt16(0x2A29))))
        #expect(manufacturer.name == "Manufacturer Name String")
        #expect(try manufacturer.stringValue(Array("Bluejay".utf8)) == ["Manufacturer Name String": "Bluejay"])
        let system = try #require(DeviceInformationProfile.SystemID(manufacturerIdentifier: 0x12_3456_789A, organizationallyUniqueIdentifier: 0xABCDEF))
        #expect(system.serialize() == [0x9A, 0x78, 0x56, 0x34, 0x12, 0xEF, 0xCD, 0xAB])
        let decoded = try DeviceInformationProfile.SystemID.deserialize(system.serialize())
        #expect(decoded.manufacturerIdentifier == 0x12_3456_789A && decoded.organizationallyUniqueIdentifier == 0xABCDEF)
        #expect(DeviceInformationProfile.SystemID(manufacturerIdentifier: 1 << 40, organizationallyUniqueIdentifier: 0) == nil)
        let pnp = DeviceInformationProfile.PnPID(vendorIDSource: 1, vendorID: 0x004C, productID: 0x0001, productVersion: 0x0100)
        #expect(pnp.serialize() == [0x01, 0x4C, 0x00, 0x01, 0x00, 0x00, 0x01])
        #expect(try DeviceInformationProfile.PnPID(bytes: pnp.serialize()) == pnp)
        #expect(throws: SerdeError.wrongLength(type: "PnP ID", expected: 7, actual: 6)) { try DeviceInformationProfile.PnPID(bytes: [1, 2, 3, 4, 5, 6]) }
    }

    @Test("Current Time: ten octets, every field range-checked")
    func currentTime() throws {
        let time = CurrentTimeProfile.CurrentTime(year: 2024, month: 3, day: 5, hours: 14, minutes: 7, seconds: 9, dayOfWeek: 2)
        let bytes = time.serialize()
        #expect(bytes == [0xE8, 0x07, 3, 5, 14, 7, 9, 2, 0, 0])
        #expect(try CurrentTimeProfile.CurrentTime(bytes: bytes) == time)
        #expect(time.stringValue["Date"] == "2024-03-05" && time.stringValue["Time"] == "14:07:09")
        #expect(CurrentTimeProfile.CurrentTime(stringValue: time.stringValue) == time)
        #expect(throws: SerdeError.invalidValue(type: "Current Time", reason: "hour 24 is above 23")) {
            try CurrentTimeProfile.CurrentTime(bytes: [0xE8, 0x07, 3, 5, 24, 7, 9, 2, 0, 0])
        }
        #expect(throws: SerdeError.wrongLength(type: "Current Time", expected: 10, actual: 9)) {
            try CurrentTimeProfile.CurrentTime(bytes: Array(bytes.prefix(9)))
        }
        #expect(try CurrentTimeProfile.LocalTimeInformation.deserialize([0xFC, 4]).rawValue1 == -4)
        #expect(throws: SerdeError.self) { try CurrentTimeProfile.LocalTimeInformation.deserialize([0, 3]) }
    }

    @Test("TI SensorTag accelerometer: three signed axes, enabled flag, update period")
    func sensorTag() throws {
        typealias Accelerometer = TISensorTag.AccelerometerService
        let data = try Accelerometer.Data.deserialize([0x40, 0xC0, 0x00])
        #expect(data.x == 1 && data.y == -1 && data.z == 0)
        #expect(throws: SerdeError.wrongLength(type: "Data", expected: 3, actual: 2)) { try Accelerometer.Data.deserialize([1, 2]) }
        #expect(try Accelerometer.Enabled.deserialize([1]) == .yes)
        #expect(Accelerometer.Enabled.stringValues == ["No", "Yes"])
        #expect(try Accelerometer.UpdatePeriod.deserialize([50]).milliseconds == 500)
        #expect(throws: SerdeError.self) { try Accelerometer.UpdatePeriod.deserialize([0]) }
        #expect(Accelerometer.UpdatePeriod(stringValue: ["period": "250"])?.rawValue == 25)
        let profile = Accelerometer.profile
        #expect(profile.characteristic(Accelerometer.Enabled.uuid)?.bytes(stringValue: ["Accelerometer Enabled": "Yes"]) == [1])
        #expect(profile.characteristic(Accelerometer.Data.uuid)?.properties == [.read, .notify])
    }
}
