import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothVirtual
import GATTProfiles

extension HeartRateSensor {
    /// How a ``HeartRateSensor`` looks and behaves.
    public struct Configuration: Sendable {
        /// The advertised local name.
        public var name = "Bluejay HRM"
        /// `nil` derives one from the name.
        public var address: BluetoothAddress?
        /// Device Information (180A): 2A29.
        public var manufacturer = "Bluejay"
        /// Device Information: 2A24.
        public var model = "HRM-1"
        /// Device Information: 2A25.
        public var serialNumber = "SN-0001"
        /// Device Information: 2A26.
        public var firmwareRevision = "1.0.0"
        /// Body Sensor Location (2A38) at start; centrals may read and write it.
        public var location: HeartRateProfile.BodySensorLocation = .chest
        /// What a central's link needs to read or write the Body Sensor Location: e.g.
        /// `.encryption` makes the central pair first, as a locked sensor would. None by default.
        public var locationSecurity: PeripheralSecurity = []
        /// Battery Level (2A19) at start, percent.
        public var batteryLevel: UInt8 = 87
        /// Where the beats per minute come from.
        public var heartRate: HeartRateSource = .resting
        /// Time between Heart Rate Measurement notifications; `nil` sends them only when the
        /// test calls ``HeartRateSensor/sendMeasurement()``.
        public var measurementInterval: Duration? = .seconds(1)
        /// Send every heart rate in the 16-bit form (flags bit 0), not only those above 255.
        public var uses16BitFormat = false
        /// What the measurement says about skin contact.
        public var sensorContact: HeartRateProfile.Measurement.SensorContact = .detected
        /// Include Energy Expended (kJ, one more per measurement; 2A39 resets it).
        public var reportsEnergyExpended = false
        /// Time between advertising events.
        public var advertisingInterval: Duration = .milliseconds(100)
        /// On a virtual link, in metres.
        public var position = VirtualPosition(x: 1, y: 0)

        /// The defaults, with the settings tests change most.
        public init(name: String = "Bluejay HRM", serialNumber: String = "SN-0001", heartRate: HeartRateSource = .resting,
                    measurementInterval: Duration? = .seconds(1)) {
            self.name = name
            self.serialNumber = serialNumber
            self.heartRate = heartRate
            self.measurementInterval = measurementInterval
        }
    }

    /// Heart Rate Control Point: Control Point Not Supported (Heart Rate Service 1.0, 3.3.2.1).
    public static let controlPointNotSupported = ATTErrorCode(rawValue: 0x80)

    /// The sensor as a ``SimulatedPeripheral``: Heart Rate (180D: 2A37 notify, 2A38
    /// read/write, 2A39 write), Device Information (180A: 2A29, 2A24, 2A25, 2A26) and
    /// Battery (180F: 2A19 read/notify). Start it on any controller with
    /// `SimulatedDevice/start(_:transport:)` and wrap it, or use
    /// ``Simulator/addHeartRateSensor(_:)``.
    public static func declaration(_ configuration: Configuration) -> SimulatedPeripheral {
        declaration(configuration, energy: EnergyExpendedCounter())
    }

    /// The declaration whose control point resets `energy`, before the write is answered.
    static func declaration(_ configuration: Configuration, energy: EnergyExpendedCounter) -> SimulatedPeripheral {
        let text: (String) -> [UInt8] = { Array($0.utf8) }
        let heartRate = SimulatedService(HeartRateProfile.Service.self, characteristics: [
            SimulatedCharacteristic(HeartRateProfile.Measurement.self,
                                    value: measurementBytes(heartRate: 0, sensorContact: configuration.sensorContact)),
            SimulatedCharacteristic(HeartRateProfile.BodySensorLocation.self, value: [configuration.location.rawValue],
                                    properties: [.read, .write], maximumValueLength: 1, security: configuration.locationSecurity,
                                    onWrite: { write in
                                        guard write.value.count == 1 else { return .error(.invalidAttributeValueLength) }
                                        guard let byte = write.value.first, HeartRateProfile.BodySensorLocation(rawValue: byte) != nil else {
                                            return .error(.outOfRange)
                                        }
                                        return .success
                                    }),
            SimulatedCharacteristic(HeartRateProfile.ControlPoint.self, maximumValueLength: 1, onWrite: { write in
                guard write.value == [HeartRateProfile.ControlPoint.resetEnergyExpended.rawValue] else {
                    return .error(controlPointNotSupported)
                }
                energy.reset()
                return .success
            }),
        ])
        let information = SimulatedService(DeviceInformationProfile.Service.self, characteristics: [
            SimulatedCharacteristic(DeviceInformationProfile.ManufacturerName.self, value: text(configuration.manufacturer)),
            SimulatedCharacteristic(DeviceInformationProfile.ModelNumber.self, value: text(configuration.model)),
            SimulatedCharacteristic(DeviceInformationProfile.SerialNumber.self, value: text(configuration.serialNumber)),
            SimulatedCharacteristic(DeviceInformationProfile.FirmwareRevision.self, value: text(configuration.firmwareRevision)),
        ])
        var battery = SimulatedService(BatteryProfile.Service.self, characteristics: [
            SimulatedCharacteristic(BatteryProfile.Level.self, value: [min(configuration.batteryLevel, 100)]),
        ])
        // Named and typed as a battery service often is: a User Description and a
        // Presentation Format (uint8, percentage), after every other attribute.
        battery.characteristics[0].definition.userDescription = "Battery level"
        battery.characteristics[0].definition.presentationFormat = GATTPresentationFormat(format: 0x04, unit: 0x27AD)
        var declaration = SimulatedPeripheral(name: configuration.name, address: configuration.address,
                                              advertisingInterval: configuration.advertisingInterval,
                                              services: [heartRate, information, battery], position: configuration.position)
        declaration.advertisedServiceUUIDs = [HeartRateProfile.Service.uuid, BatteryProfile.Service.uuid]
        return declaration
    }

    /// A Heart Rate Measurement value (Heart Rate Service 1.0, 3.1.1): the 8-bit form when the
    /// rate fits and `uses16BitFormat` is off, else the 16-bit form.
    public static func measurementBytes(heartRate: UInt16, uses16BitFormat: Bool = false,
                                        sensorContact: HeartRateProfile.Measurement.SensorContact = .detected,
                                        energyExpended: UInt16? = nil) -> [UInt8] {
        let measurement = HeartRateProfile.Measurement(heartRate: heartRate, sensorContact: sensorContact, energyExpended: energyExpended)
        var bytes = measurement.serialize()
        if uses16BitFormat, heartRate <= 0xFF, let flags = bytes.first {
            // The profile's encoder picks the shortest form; widen it.
            bytes = [flags | 0x01] + heartRate.serialize() + Array(bytes.dropFirst(2))
        }
        return bytes
    }
}
