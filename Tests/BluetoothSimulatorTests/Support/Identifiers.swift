import Bluejay
import Foundation

/// The identifiers the README examples use, for the simulated heart-rate sensor.
enum HeartRate {
    static let service = ServiceIdentifier(uuid: "180D")
    static let measurement = CharacteristicIdentifier(uuid: "2A37", service: service)
    static let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: service)
    static let controlPoint = CharacteristicIdentifier(uuid: "2A39", service: service)
    static let deviceInformation = ServiceIdentifier(uuid: "180A")
    static let serialNumber = CharacteristicIdentifier(uuid: "2A25", service: deviceInformation)
    static let manufacturer = CharacteristicIdentifier(uuid: "2A29", service: deviceInformation)
    static let batteryService = ServiceIdentifier(uuid: "180F")
    static let batteryLevel = CharacteristicIdentifier(uuid: "2A19", service: batteryService)
}

/// The UART device's identifiers.
enum UART {
    static let service = ServiceIdentifier(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let rx = CharacteristicIdentifier(uuid: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", service: service)
    static let tx = CharacteristicIdentifier(uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", service: service)
}

/// The README's heart rate measurement: 8- or 16-bit, as the flags say.
struct HeartRateMeasurement: Receivable, Sendable, Equatable {
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
