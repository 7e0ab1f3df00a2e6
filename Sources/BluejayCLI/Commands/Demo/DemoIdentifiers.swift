import Bluejay
import Foundation
import GATTProfiles

/// What the demo talks to: the identifiers of the Bluejay README.
enum DemoIdentifiers {
    static let heartRateService = ServiceIdentifier(uuid: "180D")
    static let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
    static let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
    static let deviceInformation = ServiceIdentifier(uuid: "180A")
    static let serialNumber = CharacteristicIdentifier(uuid: "2A25", service: deviceInformation)
    static let batteryService = ServiceIdentifier(uuid: "180F")
    static let batteryLevel = CharacteristicIdentifier(uuid: "2A19", service: batteryService)

    /// "Chest", "Wrist", … (Heart Rate Service 1.0, 3.2), or the number.
    static func locationName(_ location: UInt8) -> String {
        let names = HeartRateProfile.BodySensorLocation.stringValues
        return Int(location) < names.count ? names[Int(location)] : "location \(location)"
    }
}

/// The README's heart rate measurement: 8- or 16-bit, as the flags say.
struct HeartRateMeasurement: Receivable, Sendable {
    private var flags: UInt8 = 0
    private var measurement8bits: UInt8 = 0
    private var measurement16bits: UInt16 = 0
    private(set) var isMeasurementIn8bits = true

    var measurement: Int { isMeasurementIn8bits ? Int(measurement8bits) : Int(measurement16bits) }

    init(bluetoothData: Data) throws {
        flags = try bluetoothData.extract(start: 0, length: 1)
        isMeasurementIn8bits = (flags & 0b0000_0001) == 0b0000_0000
        if isMeasurementIn8bits {
            measurement8bits = try bluetoothData.extract(start: 1, length: 1)
        } else {
            measurement16bits = try bluetoothData.extract(start: 1, length: 2)
        }
    }
}
