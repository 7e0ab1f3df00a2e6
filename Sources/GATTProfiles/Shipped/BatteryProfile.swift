import BluetoothCore

/// The Battery service (Bluetooth SIG, Battery Service 1.0).
public enum BatteryProfile {
    public struct Service: ServiceConfigurable {
        public static let uuid = BluetoothUUID(UInt16(0x180F))
        public static let name = "Battery"
        public static let tag = "Bluetooth SIG"
    }

    /// Battery Level (0x2A19): percent, 0 to 100 (Battery Service 1.0, 3.1).
    public struct Level: RawDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
        public static let uuid = BluetoothUUID(UInt16(0x2A19))
        public static let name = "Battery Level"
        public static let properties: CharacteristicProperties = [.read, .notify]
        public static let permissions: ProfileAttributePermissions = [.readable]
        public static let initialValue: [UInt8]? = [100]
        public static let stringValues: [String] = []

        public let rawValue: UInt8

        /// `nil` above 100.
        public init?(rawValue: UInt8) {
            guard rawValue <= 100 else { return nil }
            self.rawValue = rawValue
        }

        public var stringValue: [String: String] { [Self.name: String(rawValue)] }

        public init?(stringValue: [String: String]) {
            guard let value = stringValue[Self.name].flatMap({ UInt8(stringValue: $0) }) else { return nil }
            self.init(rawValue: value)
        }
    }

    public static var service: ServiceProfile { ServiceProfile(Service.self, characteristics: [.raw(Level.self)]) }
}
