import BluetoothCore

/// The Heart Rate service (Bluetooth SIG, Heart Rate Service 1.0; UUIDs in Assigned
/// Numbers 3.4 and 3.8).
public enum HeartRateProfile {
    public struct Service: ServiceConfigurable {
        public static let uuid = BluetoothUUID(UInt16(0x180D))
        public static let name = "Heart Rate"
        public static let tag = "Bluetooth SIG"
    }

    /// Heart Rate Measurement (0x2A37), notified: a flags octet that says which fields follow
    /// (Heart Rate Service 1.0, 3.1.1).
    public struct Measurement: BytesDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
        public static let uuid = BluetoothUUID(UInt16(0x2A37))
        public static let name = "Heart Rate Measurement"
        public static let properties: CharacteristicProperties = [.notify]
        public static let permissions: ProfileAttributePermissions = []
        public static let initialValue: [UInt8]? = nil
        public static let stringValues: [String] = []

        /// Whether the sensor touches the skin; `nil` when it cannot tell.
        public enum SensorContact: Hashable, Sendable {
            case notSupported
            case notDetected
            case detected
        }

        /// Beats per minute.
        public var heartRate: UInt16
        public var sensorContact: SensorContact
        /// Kilojoules since the last reset.
        public var energyExpended: UInt16?
        /// RR intervals in units of 1/1024 s, oldest first.
        public var rrIntervals: [UInt16]

        public init(heartRate: UInt16, sensorContact: SensorContact = .notSupported, energyExpended: UInt16? = nil, rrIntervals: [UInt16] = []) {
            self.heartRate = heartRate
            self.sensorContact = sensorContact
            self.energyExpended = energyExpended
            self.rrIntervals = rrIntervals
        }

        public init(bytes: [UInt8]) throws(SerdeError) {
            let type = "Heart Rate Measurement"
            guard let flags = bytes.first else { throw .tooShort(type: type, offset: 0, needed: 1, available: 0) }
            var offset = 1
            if flags & 0x01 == 0 {
                heartRate = UInt16(try UInt8.deserialize(bytes, at: offset))
                offset += 1
            } else {
                heartRate = try UInt16.deserialize(bytes, at: offset)
                offset += 2
            }
            switch (flags >> 1) & 0x03 {
            case 0b11: sensorContact = .detected
            case 0b10: sensorContact = .notDetected
            default: sensorContact = .notSupported
            }
            if flags & 0x08 != 0 {
                energyExpended = try UInt16.deserialize(bytes, at: offset)
                offset += 2
            } else {
                energyExpended = nil
            }
            if flags & 0x10 != 0 {
                rrIntervals = try UInt16.deserializeArray(Array(bytes[offset...]))
            } else {
                guard offset == bytes.count else {
                    throw .invalidValue(type: type, reason: "\(bytes.count - offset) octets after the last field the flags announce")
                }
                rrIntervals = []
            }
        }

        /// The shortest encoding: 8-bit heart rate when it fits.
        public func serialize() -> [UInt8] {
            var flags: UInt8 = heartRate > 0xFF ? 0x01 : 0x00
            switch sensorContact {
            case .notSupported: break
            case .notDetected: flags |= 0b100
            case .detected: flags |= 0b110
            }
            if energyExpended != nil { flags |= 0x08 }
            if !rrIntervals.isEmpty { flags |= 0x10 }
            var bytes = [flags] + (heartRate > 0xFF ? heartRate.serialize() : [UInt8(heartRate)])
            if let energyExpended { bytes += energyExpended.serialize() }
            bytes += UInt16.serialize(rrIntervals)
            return bytes
        }

        public var stringValue: [String: String] {
            var fields = ["Heart Rate": String(heartRate)]
            if let energyExpended { fields["Energy Expended"] = String(energyExpended) }
            if !rrIntervals.isEmpty { fields["RR Intervals"] = rrIntervals.map(String.init).joined(separator: " ") }
            return fields
        }

        public init?(stringValue: [String: String]) {
            guard let rate = stringValue["Heart Rate"].flatMap({ UInt16(stringValue: $0) }) else { return nil }
            var energy: UInt16?
            if let text = stringValue["Energy Expended"] {
                guard let value = UInt16(stringValue: text) else { return nil }
                energy = value
            }
            var intervals: [UInt16] = []
            if let text = stringValue["RR Intervals"] {
                let parsed = text.split(separator: " ").map { UInt16(String($0)) }
                guard parsed.allSatisfy({ $0 != nil }) else { return nil }
                intervals = parsed.compactMap { $0 }
            }
            self.init(heartRate: rate, energyExpended: energy, rrIntervals: intervals)
        }
    }

    /// Body Sensor Location (0x2A38), readable (Heart Rate Service 1.0, 3.2).
    public enum BodySensorLocation: UInt8, RawDeserializable, CharacteristicConfigurable, StringDeserializable, CaseIterable, Sendable {
        case other = 0, chest = 1, wrist = 2, finger = 3, hand = 4, earLobe = 5, foot = 6

        public static let uuid = BluetoothUUID(UInt16(0x2A38))
        public static let name = "Body Sensor Location"
        public static let properties: CharacteristicProperties = [.read]
        public static let permissions: ProfileAttributePermissions = [.readable]
        public static let initialValue: [UInt8]? = [BodySensorLocation.chest.rawValue]
        public static let stringValues = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]

        public var stringValue: [String: String] { [Self.name: Self.stringValues[Int(rawValue)]] }

        public init?(stringValue: [String: String]) {
            guard let text = stringValue[Self.name], let index = Self.stringValues.firstIndex(of: text) else { return nil }
            self.init(rawValue: UInt8(index))
        }
    }

    /// Heart Rate Control Point (0x2A39), written (Heart Rate Service 1.0, 3.3).
    public enum ControlPoint: UInt8, RawDeserializable, CharacteristicConfigurable, StringDeserializable, CaseIterable, Sendable {
        case resetEnergyExpended = 1

        public static let uuid = BluetoothUUID(UInt16(0x2A39))
        public static let name = "Heart Rate Control Point"
        public static let properties: CharacteristicProperties = [.write]
        public static let permissions: ProfileAttributePermissions = [.writeable]
        public static let initialValue: [UInt8]? = nil
        public static let stringValues = ["Reset Energy Expended"]

        public var stringValue: [String: String] { [Self.name: "Reset Energy Expended"] }

        public init?(stringValue: [String: String]) {
            guard stringValue[Self.name] == "Reset Energy Expended" else { return nil }
            self = .resetEnergyExpended
        }
    }

    public static var service: ServiceProfile {
        ServiceProfile(Service.self, characteristics: [.structured(Measurement.self), .raw(BodySensorLocation.self), .raw(ControlPoint.self)])
    }
}
