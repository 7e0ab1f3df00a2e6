import BluetoothCore

/// The accelerometer of Texas Instruments' CC2541 SensorTag, the device BlueCap's examples
/// use: vendor UUIDs F000AAxx-0451-4000-B000-000000000000.
public enum TISensorTag {
    public struct AccelerometerService: ServiceConfigurable {
        public static let uuid = BluetoothUUID("F000AA10-0451-4000-B000-000000000000")
        public static let name = "TI Accelerometer"
        public static let tag = "TI Sensor Tag"

        /// Acceleration on x, y and z, each a signed octet in units of 1/64 g.
        public struct Data: RawArrayDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
            public static let uuid = BluetoothUUID("F000AA11-0451-4000-B000-000000000000")
            public static let name = "Accelerometer Data"
            public static let properties: CharacteristicProperties = [.read, .notify]
            public static let permissions: ProfileAttributePermissions = [.readable]
            public static let initialValue: [UInt8]? = [0, 0, 64]
            public static let stringValues: [String] = []
            public static let size = 3

            public let rawValue: [Int8]

            public init?(rawValue: [Int8]) {
                guard rawValue.count == Self.size else { return nil }
                self.rawValue = rawValue
            }

            /// Acceleration in g.
            public var x: Double { Double(rawValue[0]) / 64 }
            public var y: Double { Double(rawValue[1]) / 64 }
            public var z: Double { Double(rawValue[2]) / 64 }

            public var stringValue: [String: String] {
                ["x": "\(x)", "y": "\(y)", "z": "\(z)", "xRaw": "\(rawValue[0])", "yRaw": "\(rawValue[1])", "zRaw": "\(rawValue[2])"]
            }

            public init?(stringValue: [String: String]) {
                guard let x = stringValue["xRaw"].flatMap({ Int8(stringValue: $0) }),
                      let y = stringValue["yRaw"].flatMap({ Int8(stringValue: $0) }),
                      let z = stringValue["zRaw"].flatMap({ Int8(stringValue: $0) }) else { return nil }
                self.init(rawValue: [x, y, z])
            }
        }

        /// Whether the accelerometer runs.
        public enum Enabled: UInt8, RawDeserializable, CharacteristicConfigurable, StringDeserializable, CaseIterable, Sendable {
            case no = 0
            case yes = 1

            public static let uuid = BluetoothUUID("F000AA12-0451-4000-B000-000000000000")
            public static let name = "Accelerometer Enabled"
            public static let properties: CharacteristicProperties = [.read, .write]
            public static let permissions: ProfileAttributePermissions = [.readable, .writeable]
            public static let initialValue: [UInt8]? = [Enabled.no.rawValue]
            public static let stringValues = ["No", "Yes"]

            public var stringValue: [String: String] { [Self.name: self == .yes ? "Yes" : "No"] }

            public init?(stringValue: [String: String]) {
                switch stringValue[Self.name] {
                case "Yes": self = .yes
                case "No": self = .no
                default: return nil
                }
            }
        }

        /// The sampling period in units of 10 ms.
        public struct UpdatePeriod: RawDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
            public static let uuid = BluetoothUUID("F000AA13-0451-4000-B000-000000000000")
            public static let name = "Accelerometer Update Period"
            public static let properties: CharacteristicProperties = [.read, .write]
            public static let permissions: ProfileAttributePermissions = [.readable, .writeable]
            public static let initialValue: [UInt8]? = [100]
            public static let stringValues: [String] = []

            public let rawValue: UInt8

            /// The SensorTag accepts 10 ms to 2.55 s: a raw value of at least 1.
            public init?(rawValue: UInt8) {
                guard rawValue >= 1 else { return nil }
                self.rawValue = rawValue
            }

            /// The period in milliseconds.
            public var milliseconds: Int { 10 * Int(rawValue) }

            public var stringValue: [String: String] { ["period": String(milliseconds), "periodRaw": String(rawValue)] }

            public init?(stringValue: [String: String]) {
                if let raw = stringValue["periodRaw"].flatMap({ UInt8(stringValue: $0) }) {
                    self.init(rawValue: raw)
                } else if let period = stringValue["period"].flatMap({ Int($0) }), period % 10 == 0, let raw = UInt8(exactly: period / 10) {
                    self.init(rawValue: raw)
                } else {
                    return nil
                }
            }
        }

        public static var profile: ServiceProfile {
            ServiceProfile(AccelerometerService.self, characteristics: [.rawArray(Data.self), .raw(Enabled.self), .raw(UpdatePeriod.self)])
        }
    }
}
