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

